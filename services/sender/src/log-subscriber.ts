import type { SendOutcome } from '@metronome/core';
import { subscribe, type Logger } from '@metronome/observability';
import type { PartScope, SenderEvents } from './sender-events.js';

/** Turns the sender's events into its log lines: the same messages, levels and fields the send path wrote itself (operators and tests look for them). */
export function subscribeLogs(events: SenderEvents, logger: Logger): () => void {
  return subscribe(events, {
    'job:invalid': (e) => logger.error({ jobId: e.jobId, data: e.data }, 'job payload invalid: dropped'),
    'job:error': (e) => logger.error({ err: e.error, runId: e.runId, jobId: e.jobId }, 'job failed'),
    // debug: at full speed this is thousands of lines a second; the outcome counter has the totals
    'job:outcome': (e) => logger.debug({ jobId: e.jobId, runId: e.runId, outcome: e.outcome, ms: e.heldMs }, 'job done'),
    'send:result': (e) => logSendResult(logger, e, e.outcome),
    'account:blocked': (e) =>
      logger.warn({ ...scope(e), code: e.code, retryAfterMs: e.retryAfterMs }, 'account must wait: no send from it until the wait ends'),
    'send:refused-later': (e) =>
      logger.warn(
        { accountId: e.accountId, chatId: e.chatId, code: e.code, status: e.status, runIds: e.runIds, err: e.error },
        'message refused by the platform after it was written',
      ),
    'account:cooling': (e) =>
      logger.warn(
        { accountId: e.accountId, reason: e.reason, until: new Date(e.until).toISOString(), paceFactor: e.paceFactor },
        `account cooling: ${e.words}; its runs wait and its pace is lowered`,
      ),
    'account:health-lost': (e) =>
      logger.warn({ err: e.error, accountId: e.accountId }, "account's health not recorded: this job's sends are left out of automatic cooling"),
    'account:cap': (e) => logger.info({ runId: e.runId, accountId: e.accountId, waitMs: e.waitMs }, "the account's cap is met: the run waits"),
    'account:elsewhere': (e) => logger.debug({ runId: e.runId, accountId: e.accountId, reason: e.reason }, 'account left to another replica for now'),
    'transport:missing': (e) => logger.error({ runId: e.runId, platform: e.platform }, 'no transport configured for this platform'),
    'lease:lost': (e) =>
      logger.warn(
        { runId: e.runId, accountId: e.accountId, chatId: e.chatId, ...(e.partIndex === undefined ? {} : { partIndex: e.partIndex }) },
        'delivered, but the target lease was lost meanwhile: result not recorded',
      ),
    'chat:moved': (e) => {
      if (e.moved === 'lost') logger.warn(scope(e), 'chat moved, but the target lease was lost meanwhile: not renamed');
      else
        logger.info(
          { ...scope(e), code: e.code, newChatId: e.newChatId, moved: e.moved },
          e.moved === 'moved' ? 'chat moved: target renamed, sent again at once' : 'chat moved to a chat already targeted: skipped',
        );
    },
    'directory:synced': (e) =>
      logger.info({ accountId: e.accountId, platform: e.platform, status: e.status, size: e.size, ms: e.heldMs }, 'chat directory sync ended'),
    'directory:failed': (e) => logger.warn({ err: e.error, accountId: e.accountId }, 'chat directory sync failed'),
    'chat:suppress-failed': (e) => logger.warn({ ...scope(e), err: e.error }, 'chat not added to the suppression list'),
    'claim:lost': (e) => logger.warn({ err: e.error, runId: e.runId }, 'claim failed: the database is away; the job stops claiming'),
    'claim:released': (e) => logger.info({ runId: e.runId, released: e.released }, 'claims whose answers were lost given back as pending'),
    'answer:held': (e) =>
      logger.warn({ err: e.error, runId: e.runId, what: e.what, chatIds: e.chatIds }, 'answer not written: the database is away; holding it and retrying'),
    'answer:written': (e) =>
      logger.info({ runId: e.runId, what: e.what, chatIds: e.chatIds, failures: e.failures }, 'answer written after the database came back'),
    'answer:lost': (e) =>
      logger.error(
        { err: e.error, runId: e.runId, what: e.what, chatIds: e.chatIds },
        'answer not written before the leases ended: the targets expire as unknown',
      ),
    'lock:released-late': (e) => logger.info({ accountId: e.accountId, afterMs: e.afterMs }, 'account lock released once Redis answered again'),
    'pace:unsettled': (e) =>
      e.what === 'pace'
        ? logger.warn({ err: e.error, accountId: e.accountId }, 'pace not settled: the next job keeps the slots reserved so far')
        : logger.warn({ err: e.error, accountId: e.accountId }, 'gap not settled: the next send keeps the gap reserved with its slot'),
    'pace:rebuilt': (e) => logger.info({ accountId: e.accountId, sends: e.sends }, "account's recent sends rebuilt from PostgreSQL"),
    'media:unsaved': (e) => logger.warn({ err: e.error, ...scope(e) }, 'media reference not saved'),
  });
}

/** The fields every line about one part opens with. */
function scope(e: PartScope): PartScope {
  return { runId: e.runId, accountId: e.accountId, chatId: e.chatId, partIndex: e.partIndex };
}

/** The line an answer writes, if any (a delivered part writes none; a flood wait's line waits for its write: account:blocked). */
function logSendResult(logger: Logger, e: PartScope, outcome: SendOutcome): void {
  const at = scope(e);
  switch (outcome.kind) {
    case 'sent-last':
    case 'next-part':
    case 'account-wait':
    case 'chat-moved':
      return;
    case 'chat-wait':
      return logger.info({ ...at, code: outcome.code, retryAfterMs: outcome.retryAfterMs }, 'chat must wait; other chats go on');
    case 'stop-account':
      return logger.warn({ ...at, code: outcome.code }, 'account unavailable: disconnected, its runs paused');
    case 'fail':
      if (outcome.because === 'rejected') return logger.warn({ ...at, code: outcome.code, err: outcome.message }, 'send failed permanently for this chat');
      return logger.warn({ ...at, code: outcome.code, err: outcome.message, attempts: outcome.attempts }, 'send failed: retries exhausted');
    case 'retry':
      return logger.warn({ ...at, code: outcome.code, err: outcome.message, attempts: outcome.attempts }, 'send failed: will retry');
    case 'unknown':
      return logger.warn({ ...at, code: outcome.code, err: outcome.message }, 'send outcome unknown: not retried automatically');
    case 'settle':
      return logger.warn(
        { ...at, code: outcome.code, err: outcome.message, attempts: outcome.attempts },
        'send outcome in doubt: sent again with the same key, which the platform deduplicates',
      );
  }
}
