import type { Clock } from '@metronome/core';
import type { WhatsAppSentMessageRepository } from '@metronome/db';
import type { Logger } from '@metronome/observability';

export interface ResendCleanupDeps {
  repo: Pick<WhatsAppSentMessageRepository, 'deleteSentBefore'>;
  clock: Clock;
  logger: Logger;
  keepMs: number;
  /** rows deleted per statement, so one pass never holds a long lock */
  batch?: number;
}

/** Deletes the WhatsApp messages kept for re-sends once they are older than `keepMs`, in batches; returns how many. */
export async function cleanupSentMessages(d: ResendCleanupDeps): Promise<number> {
  const before = new Date(d.clock.now() - d.keepMs);
  const batch = d.batch ?? 5_000;
  let total = 0;
  for (;;) {
    const n = await d.repo.deleteSentBefore(before, batch);
    total += n;
    if (n < batch) return total;
  }
}

/** Runs the cleanup every `everyMs` (first after one period); a failed pass is logged and tried again next time. */
export function startResendCleanup(d: ResendCleanupDeps, everyMs = 3_600_000): { stop(): void } {
  const timer = setInterval(() => {
    cleanupSentMessages(d).then(
      (n) => n > 0 && d.logger.info({ deleted: n }, 'whatsapp messages past WHATSAPP_RESEND_DAYS deleted'),
      (err: unknown) => d.logger.warn({ err }, 'whatsapp sent messages cleanup failed'),
    );
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
