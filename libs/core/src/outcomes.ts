/** How every sender job and every scheduler decision ends (CONTRACT §4): exactly one of these. */
export const OUTCOMES = ['sent', 'deferred', 'inactive-campaign', 'no-account', 'stale-message', 'lock-busy', 'window-closed', 'failed'] as const;

export type Outcome = (typeof OUTCOMES)[number];
