// Which run events read from `run_events` go out now. Their ids come from one sequence, taken
// when a transaction inserts the event, so a lower id can commit after a higher one: an id
// missing below one already read is most likely a transaction still under way. The reader
// waits for it up to `gapWaitMs`, so events go out in id order (a client's Last-Event-ID then
// replays exactly what it missed); past that wait the id is taken as rolled back and passed,
// but still looked for (`late`) for `lateKeepMs`, and sent if it turns up after all.

export interface EventOrder {
  /** the highest id handed on; the next read is of ids above it */
  lastId: number;
  /** since when each missing id (the lowest of a gap) has been waited for, ms */
  waitingSince: Map<number, number>;
  /** ids passed as missing, and when: looked for again until `lateKeepMs` */
  late: Map<number, number>;
}

export const GAP_WAIT_MS = 2_000;
export const LATE_KEEP_MS = 60_000;

/** A fresh order starting after `lastId`. */
export function startOrder(lastId: number): EventOrder {
  return { lastId, waitingSince: new Map(), late: new Map() };
}

/**
 * Takes the ids read above `order.lastId` (ascending) and the late ones found again; returns
 * the ids to hand on now, in that order, and the order after them.
 */
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
