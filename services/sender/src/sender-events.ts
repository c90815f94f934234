import type { Outcome, SendOutcome } from '@metronome/core';
import { EventBus } from '@metronome/observability';

/** Where a part's event happened: the run, its account and chat, and which part. */
export interface PartScope {
  runId: string;
  accountId: string;
  chatId: string;
  partIndex: number;
}

/** What the sender reports, by name. */
export interface SenderEventMap {
  /** A job began, `waitMs` after it was due (added plus its delay). */
  'job:start': { jobId: string | undefined; waitMs: number };
  'job:invalid': { jobId: string | undefined; data: unknown };
  /** A job threw; its run's truth stays in PostgreSQL and the reconciler gives it a new job. */
  'job:error': { jobId: string; runId: string; error: unknown };
  'job:outcome': { jobId: string | undefined; runId: string | undefined; outcome: Outcome; heldMs: number };
  'run:first-send': { runId: string; trigger: string; lagMs: number };
  /** A platform answered one part; `outcome` is what libs/core decided it means. */
  'send:result': PartScope & { platform: string; outcome: SendOutcome };
  'account:blocked': PartScope & { code: string; retryAfterMs: number };
  /** The account began cooling after a job; `words` says why, for people. */
  'account:cooling': { accountId: string; platform: string; reason: string; until: number; paceFactor: number; words: string };
  /** A job's flood waits and outcomes could not be added to its account's health. */
  'account:health-lost': { accountId: string; error: unknown };
  'account:cap': { runId: string; accountId: string; waitMs: number };
  /** The transport says the account is for another replica now: the job comes back later. */
  'account:elsewhere': { runId: string; accountId: string; reason: string };
  'transport:missing': { runId: string; platform: string };
  /** A chat was delivered but its target lease was lost before the answer was recorded. */
  'lease:lost': { runId: string; accountId: string; chatId: string; partIndex?: number };
  /** The platform moved the chat to `newChatId`; `moved` is what became of the target. */
  'chat:moved': PartScope & { code: string; newChatId: string; moved: 'moved' | 'skipped' | 'lost' };
  'chat:suppress-failed': PartScope & { error: unknown };
  /** A claim statement got no answer (the database is away): the job stops claiming. */
  'claim:lost': { runId: string; error: unknown };
  'claim:released': { runId: string; released: number };
  /** An answer could not be written (the database is away): it is held and retried. */
  'answer:held': { runId: string; what: string; chatIds: string[]; error: unknown };
  'answer:written': { runId: string; what: string; chatIds: string[]; failures: number };
  /** A held answer outlived the leases: its targets expire as unknown. */
  'answer:lost': { runId: string; what: string; chatIds: string[]; error: unknown };
  /** A job's account lock, whose release Redis did not answer, was released `afterMs` later (its TTL would have held it longer). */
  'lock:released-late': { accountId: string; afterMs: number };
  'pace:unsettled': { accountId: string; what: 'pace' | 'gap'; error: unknown };
  'pace:rebuilt': { accountId: string; sends: number };
  /** A chat whose delivery was in doubt was delivered on a re-send with the same key: the platform settled it (`settledBy: platform`). */
  'send:settled': { runId: string; accountId: string; chatId: string; partIndex: number; platform: string };
  /** A chat directory sync ended (CONTRACT §3): where it stands, how many entries, how long it took. */
  'directory:synced': { accountId: string; platform: string; status: string; size: number; heldMs: number };
  /** A chat directory sync failed outside the platform (credentials, the database): it is `failed`. */
  'directory:failed': { accountId: string; platform: string; error: unknown };
  /**
   * The platform refused a message after it was written (WhatsApp's ERROR ack): its target moved to `status` in `runIds` (none: not found as sent), or
   * `not-recorded` with `error`.
   */
  'send:refused-later': { accountId: string; chatId: string; code: string; status: string; runIds: string[]; error?: unknown };
  'media:unsaved': PartScope & { error: unknown };
}

/** The sender's event bus. */
export type SenderEvents = EventBus<SenderEventMap>;

export function senderEvents(): SenderEvents {
  return new EventBus<SenderEventMap>();
}
