/** Every status a run can have (CONTRACT §4), in the order a run usually moves through them. */
export const RUN_STATUSES = ['queued', 'running', 'paused', 'success', 'partial', 'failed', 'cancelled'] as const;

export type RunStatusName = (typeof RUN_STATUSES)[number];

/**
 * Runs a sender may work on: waiting for their job or sending. A campaign has at most one such
 * run (runs_one_open_per_campaign), and each must have a live job in the queue.
 */
export const OPEN_RUN_STATUSES = ['queued', 'running'] as const satisfies readonly RunStatusName[];

/** Runs not finished yet: the open ones and the paused ones, which an operator or the window may resume. */
export const LIVE_RUN_STATUSES = ['queued', 'running', 'paused'] as const satisfies readonly RunStatusName[];

/** Runs that ended; only a retry of their failed targets queues them again. */
export const FINISHED_RUN_STATUSES = ['success', 'partial', 'failed', 'cancelled'] as const satisfies readonly RunStatusName[];

/** Whether `status` is one of `set` (a typed `includes` for the readonly sets above). */
export function isRunStatusIn(status: string, set: readonly RunStatusName[]): boolean {
  return (set as readonly string[]).includes(status);
}
