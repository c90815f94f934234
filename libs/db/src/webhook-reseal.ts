import { keyId, open, seal } from '@metronome/core';
import type { WebhookRepository } from './repositories/webhook-repository.js';

/** What re-sealing the webhook secrets did. */
export interface WebhookResealReport {
  resealed: number;
  /** changed by someone else meanwhile: left as written */
  raced: number;
  /** sealed under a key that is not configured: left as they are */
  unreadable: string[];
}

/**
 * Re-seals every webhook secret under `keys[0]` (SECRETS_KEY), opening each with any of `keys`,
 * like resealSecrets does for account credentials; each swap is a compare-and-set, and a second
 * pass finds nothing to do.
 */
export async function resealWebhookSecrets(repo: WebhookRepository, keys: Buffer[], batchSize = 500): Promise<WebhookResealReport> {
  const current = keys[0]!;
  const id = keyId(current);
  const report: WebhookResealReport = { resealed: 0, raced: 0, unreadable: [] };
  let after: string | null = null;
  for (;;) {
    const page = await repo.secretsNotUnder(id, after, batchSize);
    if (page.length === 0) return report;
    const swaps = [];
    for (const row of page) {
      try {
        swaps.push({ ...row, next: seal(open(row.sealed, keys), current) });
      } catch {
        report.unreadable.push(row.webhookId);
      }
    }
    const done = await repo.replaceSecrets(swaps);
    report.resealed += done;
    report.raced += swaps.length - done;
    after = page[page.length - 1]!.webhookId;
  }
}
