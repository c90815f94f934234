import { keyId, open, seal } from '@metronome/core';
import type { Replacement, SealedAuthRow, SealedCredential, SealedSecretsRepository } from './repositories/sealed-secrets-repository.js';

/** What one re-sealing pass did. */
export interface ResealReport {
  /** values now sealed under the current key */
  resealed: { credentials: number; whatsappAuth: number };
  /** values changed by someone else meanwhile (already written under the current key): left as they are */
  raced: number;
  /** values sealed under a key that is not configured: left as they are, listed by account */
  unreadable: { table: 'accounts' | 'whatsapp_auth'; accountId: string }[];
}

/**
 * Re-seals every account credential and WhatsApp auth row under `keys[0]` (SECRETS_KEY), opening
 * them with any of `keys` (SECRETS_KEY_PREVIOUS…), so a retired key can then be dropped. Pages
 * through the rows not yet under the current key; each swap is a compare-and-set, so a service
 * writing the same row meanwhile (a WhatsApp key update) wins and nothing is lost. Safe to run
 * again: a second pass finds nothing to do.
 */
export async function resealSecrets(repo: SealedSecretsRepository, keys: Buffer[], batchSize = 500): Promise<ResealReport> {
  const current = keys[0]!;
  const report: ResealReport = { resealed: { credentials: 0, whatsappAuth: 0 }, raced: 0, unreadable: [] };
  const id = keyId(current);

  let afterAccount: string | null = null;
  for (;;) {
    const page: SealedCredential[] = await repo.credentialsNotUnder(id, afterAccount, batchSize);
    if (page.length === 0) break;
    const swaps: Replacement<SealedCredential>[] = [];
    for (const row of page) {
      const next = reseal(row.sealed, keys, current);
      if (next) swaps.push({ ...row, next });
      else report.unreadable.push({ table: 'accounts', accountId: row.accountId });
    }
    const done = await repo.replaceCredentials(swaps);
    report.resealed.credentials += done;
    report.raced += swaps.length - done;
    afterAccount = page[page.length - 1]!.accountId;
  }

  let afterAuth: Omit<SealedAuthRow, 'sealed'> | null = null;
  for (;;) {
    const page: SealedAuthRow[] = await repo.authRowsNotUnder(id, afterAuth, batchSize);
    if (page.length === 0) break;
    const swaps: Replacement<SealedAuthRow>[] = [];
    for (const row of page) {
      const next = reseal(row.sealed, keys, current);
      if (next) swaps.push({ ...row, next });
      else if (!report.unreadable.some((u) => u.table === 'whatsapp_auth' && u.accountId === row.accountId)) report.unreadable.push({ table: 'whatsapp_auth', accountId: row.accountId });
    }
    const done = await repo.replaceAuthRows(swaps);
    report.resealed.whatsappAuth += done;
    report.raced += swaps.length - done;
    const last = page[page.length - 1]!;
    afterAuth = { accountId: last.accountId, kind: last.kind, keyId: last.keyId };
  }
  return report;
}

function reseal(sealed: Buffer, keys: Buffer[], current: Buffer): Buffer | null {
  try {
    return seal(open(sealed, keys), current);
  } catch {
    return null;
  }
}
