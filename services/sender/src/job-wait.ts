/** What a BullMQ job says of when it was added and how long it was to wait. */
export interface QueuedJob {
  timestamp: number;
  /** BullMQ keeps the delay asked for here; `job.delay` reads 0 once a delayed job is promoted */
  opts: { delay?: number };
}

/** How long `job` sat due before it began at `startedAt`, ms: begun minus (added plus its delay). */
export function jobWaitMs(job: QueuedJob, startedAt: number): number {
  return startedAt - job.timestamp - (job.opts.delay ?? 0);
}
