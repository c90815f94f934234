/** Every status a run can have (CONTRACT §4), in the order a run usually moves through them. */
export const RUN_STATUSES = ['queued', 'running', 'paused', 'success', 'partial', 'failed', 'cancelled'] as const;

export type RunStatusName = (typeof RUN_STATUSES)[number];

/** Runs a sender may work on: at most one per campaign (runs_one_open_per_campaign), each with a live job in the queue. */
export const OPEN_RUN_STATUSES = ['queued', 'running'] as const satisfies readonly RunStatusName[];

/** Runs not finished yet: the open ones and the paused ones, which an operator or the window may resume. */
export const LIVE_RUN_STATUSES = ['queued', 'running', 'paused'] as const satisfies readonly RunStatusName[];

/** Runs that ended; only a retry of their failed targets queues them again. */
export const FINISHED_RUN_STATUSES = ['success', 'partial', 'failed', 'cancelled'] as const satisfies readonly RunStatusName[];

export function isRunStatusIn(status: string, set: readonly RunStatusName[]): boolean {
  return (set as readonly string[]).includes(status);
}
