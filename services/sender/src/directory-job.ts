import { Worker, type Job } from 'bullmq';
import { open, type Clock } from '@metronome/core';
import type { ChatDirectoryRepository } from '@metronome/db';
import { DIRECTORY_QUEUE, directoryJobSchema } from '@metronome/queue';
import type { Logger } from '@metronome/observability';
import type { RedisClient } from '@metronome/redis';
import type { Transport } from '@metronome/transports';
import type { SenderEvents } from './sender-events.js';

/** What a directory sync takes: the directory (the sink the transport writes to), the platforms, the keys that open credentials. */
export interface DirectoryJobDeps {
  directory: ChatDirectoryRepository;
  transports: Record<string, Transport | undefined>;
  secretsKeys: Buffer[];
  clock: Clock;
  events: SenderEvents;
  /** aborted on SIGTERM: a sync under way stops and says so */
  draining: AbortSignal;
  /** asks for the account's sync again at `until` (DirectoryQueue.retryAt) */
  retryAt: (accountId: string, until: Date) => Promise<void>;
}

/** The longest one sync may list for (a huge directory, a platform that answers slowly). */
const SYNC_LIMIT_MS = 10 * 60_000;

/** One sync of an account's chat directory (CONTRACT §3): its platform's transport lists its chats into the directory. */
export async function syncDirectory(deps: DirectoryJobDeps, accountId: string): Promise<void> {
  const now = () => new Date(deps.clock.now());
  const started = deps.clock.now();
  const account = await deps.directory.accountForSync(accountId);
  if (!account) return;
  const transport = deps.transports[account.platform];
  if (!transport?.syncDirectory) {
    await deps.directory.syncState(accountId, { status: 'unsupported', reason: `the ${account.platform} platform cannot list chats` }, now());
    deps.events.emit('directory:synced', { accountId, platform: account.platform, status: 'unsupported', size: 0, heldMs: deps.clock.now() - started });
    return;
  }
  // The account's one socket is open on another replica (WhatsApp): leave the sync to come back then, rather than take the socket over, as a send job does.
  const readiness = await transport.readiness?.(accountId);
  if (readiness && !readiness.ready) {
    await deps.retryAt(accountId, new Date(deps.clock.now() + readiness.retryAfterMs));
    return;
  }
  const signal = AbortSignal.any([deps.draining, AbortSignal.timeout(SYNC_LIMIT_MS)]);
  try {
    const credentials = account.credentials ? (JSON.parse(open(account.credentials, deps.secretsKeys).toString('utf8')) as Record<string, unknown>) : null;
    const proxy = account.proxy ? open(account.proxy, deps.secretsKeys).toString('utf8') : null;
    await transport.syncDirectory({ id: account.id, externalId: account.externalId, credentials, proxy }, deps.directory, signal);
    if (signal.aborted)
      await deps.directory.syncState(
        accountId,
        { status: 'failed', reason: 'the sync was cut short (the sender stopped, or it took too long); ask again' },
        now(),
      );
    // The platform asked to slow down (WhatsApp's rate-overlimit): the sync comes back by itself.
    const state = await deps.directory.syncOf(accountId);
    if (state?.status === 'backing_off' && state.until) await deps.retryAt(accountId, state.until);
    deps.events.emit('directory:synced', {
      accountId,
      platform: account.platform,
      status: state?.status ?? 'never',
      size: state?.size ?? 0,
      heldMs: deps.clock.now() - started,
    });
  } catch (error) {
    // Transports report platform failures themselves; this is anything else (unreadable credentials, the database).
    deps.events.emit('directory:failed', { accountId, platform: account.platform, error });
    await deps.directory.syncState(accountId, { status: 'failed', reason: 'the sync failed; ask again' }, now()).catch(() => undefined);
  }
}

export function directoryWorker(deps: DirectoryJobDeps, logger: Logger, connection: RedisClient, prefix: string, concurrency: number): Worker {
  const worker = new Worker(
    DIRECTORY_QUEUE,
    async (job: Job) => {
      const parsed = directoryJobSchema.safeParse(job.data);
      if (!parsed.success) {
        deps.events.emit('job:invalid', { jobId: job.id, data: job.data });
        return;
      }
      await syncDirectory(deps, parsed.data.accountId);
    },
    { connection, prefix, concurrency, lockDuration: 60_000 },
  );
  worker.on('error', (error) => logger.error({ err: error }, 'directory worker error'));
  return worker;
}
