/** Per-status target counts of a run. */
export interface RunCountsLike {
  total: number;
  pending: number;
  inFlight: number;
  sent: number;
  failed: number;
  skipped: number;
  unknown: number;
}
