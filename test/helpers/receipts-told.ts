import type { PostedReceipt } from '../../services/sandbox/src/receipts.js';
import { api, type Stack } from './stack.js';

// What the receipt tests judge by: what the sandbox told (its record of the receipts it posted)
// against what a run's targets show through the API.

/** A run's target as `GET /v1/runs/{id}/targets` answers it: its receipt fields. */
export interface ReceiptTarget {
  chatId: string;
  status: string;
  deliveredAt: string | null;
  readAt: string | null;
  deliveredTo: number | null;
}

/** Every target of a run, page by page. */
export async function allTargets(stack: Pick<Stack, 'apiUrl'>, token: string, runId: string): Promise<ReceiptTarget[]> {
  const out: ReceiptTarget[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { items: ReceiptTarget[]; nextCursor: string | null } } = await api(
      stack,
      'GET',
      `/v1/runs/${runId}/targets?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      token,
    );
    if (page.status !== 200) throw new Error(`targets of ${runId}: ${page.status}`);
    out.push(...page.body.items);
    cursor = page.body.nextCursor;
  } while (cursor);
  return out;
}

/**
 * What each chat of `account` must show: the earliest delivery (a read is one too) and the
 * earliest read the sandbox told, as ISO times.
 */
export function told(posted: PostedReceipt[], account: string): Map<string, { deliveredAt: string; readAt: string | null }> {
  const out = new Map<string, { deliveredAt: string; readAt: string | null }>();
  const earliest = (a: string | null | undefined, b: string) => (a == null || Date.parse(b) < Date.parse(a) ? new Date(b).toISOString() : a);
  for (const p of posted.filter((r) => r.account === account)) {
    const e = out.get(p.chatId);
    out.set(p.chatId, {
      deliveredAt: earliest(e?.deliveredAt, p.at),
      readAt: p.status === 'read' ? earliest(e?.readAt, p.at) : (e?.readAt ?? null),
    });
  }
  return out;
}
