import { keyId, open, seal } from '@metronome/core';
import type { Replacement, SealedAuthRow, SealedCredential, SealedSecretsRepository } from './repositories/sealed-secrets-repository.js';

export interface ResealReport {
  resealed: { credentials: number; proxies: number; whatsappAuth: number };
  /** changed by someone else meanwhile: left as they are */
  raced: number;
  /** sealed under a key not configured: left, listed by account */
  unreadable: { table: 'accounts' | 'accounts.proxy' | 'whatsapp_auth'; accountId: string }[];
}

/** Re-seals credentials, proxies and WhatsApp auth rows under `keys[0]`, opened with any of `keys`; compare-and-set swaps. */
export async function resealSecrets(repo: SealedSecretsRepository, keys: Buffer[], batchSize = 500): Promise<ResealReport> {
  const id = keyId(keys[0]!);
  const unreadable: ResealReport['unreadable'] = [];

  const credentials = await resealPass<SealedCredential>(keys, {
    page: (after) => repo.credentialsNotUnder(id, after?.accountId ?? null, batchSize),
    swap: (swaps) => repo.replaceCredentials(swaps),
    unreadable: (row) => unreadable.push({ table: 'accounts', accountId: row.accountId }),
  });
  const proxies = await resealPass<SealedCredential>(keys, {
    page: (after) => repo.credentialsNotUnder(id, after?.accountId ?? null, batchSize, 'proxy'),
    swap: (swaps) => repo.replaceCredentials(swaps, 'proxy'),
    unreadable: (row) => unreadable.push({ table: 'accounts.proxy', accountId: row.accountId }),
  });
  const auth = await resealPass<SealedAuthRow>(keys, {
    page: (after) => repo.authRowsNotUnder(id, after && { accountId: after.accountId, kind: after.kind, keyId: after.keyId }, batchSize),
    swap: (swaps) => repo.replaceAuthRows(swaps),
    unreadable: (row) => {
      if (!unreadable.some((u) => u.table === 'whatsapp_auth' && u.accountId === row.accountId))
        unreadable.push({ table: 'whatsapp_auth', accountId: row.accountId });
    },
  });
  return {
    resealed: { credentials: credentials.resealed, proxies: proxies.resealed, whatsappAuth: auth.resealed },
    raced: credentials.raced + proxies.raced + auth.raced,
    unreadable,
  };
}

export interface ResealSource<Row extends { sealed: Buffer }> {
  page(after: Row | null): Promise<Row[]>;
  swap(swaps: Replacement<Row>[]): Promise<number>;
  unreadable(row: Row): void;
}

/** One sealed column's pass: rows not under `keys[0]` swapped a page at a time; how many swapped, how many raced. */
export async function resealPass<Row extends { sealed: Buffer }>(keys: Buffer[], source: ResealSource<Row>): Promise<{ resealed: number; raced: number }> {
  const current = keys[0]!;
  let resealed = 0;
  let raced = 0;
  let after: Row | null = null;
  for (;;) {
    const page = await source.page(after);
    if (page.length === 0) return { resealed, raced };
    const swaps: Replacement<Row>[] = [];
    for (const row of page) {
      const next = reseal(row.sealed, keys, current);
      if (next) swaps.push({ ...row, next });
      else source.unreadable(row);
    }
    const done = await source.swap(swaps);
    resealed += done;
    raced += swaps.length - done;
    after = page[page.length - 1]!;
  }
}

function reseal(sealed: Buffer, keys: Buffer[], current: Buffer): Buffer | null {
  try {
    return seal(open(sealed, keys), current);
  } catch {
    return null;
  }
}
