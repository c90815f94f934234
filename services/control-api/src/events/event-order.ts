// Run events go out in id order. Ids come from a sequence taken at insert, so a missing id is most likely a transaction still
// under way: waited for up to `gapWaitMs`, then passed but still looked for (`late`) for `lateKeepMs`.

export interface EventOrder {
  lastId: number;
  waitingSince: Map<number, number>;
  late: Map<number, number>;
}

export const GAP_WAIT_MS = 2_000;
export const LATE_KEEP_MS = 60_000;

export function startOrder(lastId: number): EventOrder {
  return { lastId, waitingSince: new Map(), late: new Map() };
}

/** The ids to hand on now, in order, and the order after them. */
export function nextEvents(
  order: EventOrder,
  ids: number[],
  foundLate: number[],
  now: number,
  gapWaitMs = GAP_WAIT_MS,
  lateKeepMs = LATE_KEEP_MS,
): { ids: number[]; order: EventOrder } {
  const late = new Map([...order.late].filter(([id, at]) => now - at < lateKeepMs && !foundLate.includes(id)));
  const waitingSince = new Map<number, number>();
  const out = foundLate.filter((id) => order.late.has(id));
  let lastId = order.lastId;
  for (const id of ids) {
    if (id <= lastId) continue;
    if (id > lastId + 1) {
      const since = order.waitingSince.get(lastId + 1) ?? now;
      if (now - since < gapWaitMs) {
        waitingSince.set(lastId + 1, since);
        break;
      }
      for (let missing = lastId + 1; missing < id; missing++) late.set(missing, now);
    }
    out.push(id);
    lastId = id;
  }
  return { ids: out, order: { lastId, waitingSince, late } };
}
