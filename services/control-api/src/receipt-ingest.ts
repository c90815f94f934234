import type { ReceiptOutcome, ReceiptSubmission } from '@metronome/db';

export interface ReceiptIngestOptions {
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
 * A group commit: one write at a time, the posts arriving meanwhile going together in the next, on one connection however many
 * arrive. Each post gets its own outcome once committed.
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
