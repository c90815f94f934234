import type { ReceiptOutcome, ReceiptSubmission } from '@metronome/db';

export interface ReceiptIngestOptions {
  /** writes several submissions in one transaction (libs/db ReceiptRepository.recordMany) */
  write(submissions: ReceiptSubmission[]): Promise<ReceiptOutcome[]>;
  /** the most receipts one write takes; the rest wait for the next */
  maxReceipts?: number;
}

interface Waiting {
  submission: ReceiptSubmission;
  resolve(outcome: ReceiptOutcome): void;
  reject(error: unknown): void;
}

/**
 * Receipt posts written together (a group commit): one write at a time; the posts that come
 * while it runs wait and go together in the next. An idle API writes a post at once; a busy one
 * pays one transaction for many posts instead of one each, and holds one connection for
 * receipts however many posts arrive (receipts never crowd out the rest of the API). Each post
 * still gets its own outcome when its write has committed; a failed write fails its posts.
 */
export class ReceiptIngest {
  private queue: Waiting[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly options: ReceiptIngestOptions) {}

  submit(submission: ReceiptSubmission): Promise<ReceiptOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ submission, resolve, reject });
      this.kick();
    });
  }

  /** Resolves when nothing is queued or being written. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = this.writeQueued().finally(() => {
      this.writing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async writeQueued(): Promise<void> {
    const max = this.options.maxReceipts ?? 5000;
    let n = 0;
    let take = 0;
    // at least one post, however large; then as many as fit
    while (take < this.queue.length && (take === 0 || n + this.queue[take]!.submission.receipts.length <= max))
      n += this.queue[take++]!.submission.receipts.length;
    const batch = this.queue.splice(0, take);
    try {
      const outcomes = await this.options.write(batch.map((w) => w.submission));
      batch.forEach((w, i) => w.resolve(outcomes[i]!));
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
}
