import { keyId } from '@metronome/core';
import type { SealedWebhookSecret, WebhookRepository } from './repositories/webhook-repository.js';
import { resealPass } from './reseal.js';

/** What re-sealing the webhook secrets did. */
export interface WebhookResealReport {
  resealed: number;
  raced: number;
  unreadable: string[];
}

/** Re-seals every webhook secret under `keys[0]`, as resealSecrets does for accounts. */
export async function resealWebhookSecrets(repo: WebhookRepository, keys: Buffer[], batchSize = 500): Promise<WebhookResealReport> {
  const id = keyId(keys[0]!);
  const unreadable: string[] = [];
  const { resealed, raced } = await resealPass<SealedWebhookSecret>(keys, {
    page: (after) => repo.secretsNotUnder(id, after?.webhookId ?? null, batchSize),
    swap: (swaps) => repo.replaceSecrets(swaps),
    unreadable: (row) => unreadable.push(row.webhookId),
  });
  return { resealed, raced, unreadable };
}
