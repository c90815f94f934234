import type { Connection } from './connection.js';
import type { SocketLease } from './socket-lease.js';
import type { WhatsAppLogger } from './socket.js';

export interface LeaseRenewal {
  connections: Iterable<Connection>;
  lease: SocketLease;
  holderId: string;
  leaseTtlMs: number;
  drainMaxMs: number;
  logger: WhatsAppLogger;
  isPairing(conn: Connection): boolean;
  /** a pairing asked to hand over is superseded by a newer one elsewhere: no end to report */
  supersedePairing(conn: Connection): void;
  endPairing(conn: Connection, reason: { code: string; message: string }): Promise<void>;
  dispose(conn: Connection, why: string): Promise<void>;
}

/** Renewals sent together: ioredis pipelines them, so a thousand sockets renew in a few round trips, not a thousand. */
const BATCH = 100;

export async function renewLeases(r: LeaseRenewal): Promise<void> {
  const conns = [...r.connections].filter((c) => !c.disposed);
  for (let i = 0; i < conns.length; i += BATCH) await Promise.all(conns.slice(i, i + BATCH).map((c) => renewOne(r, c)));
}

async function renewOne(r: LeaseRenewal, conn: Connection): Promise<void> {
  const answer = await r.lease.renew(conn.accountId, r.holderId, r.leaseTtlMs).catch(() => 'unknown' as const);
  if (answer === 'lost') {
    // Another replica may be opening its socket: close ours at once.
    r.logger.warn({ accountId: conn.accountId }, 'whatsapp socket lease lost: closing the socket');
    void (r.isPairing(conn) ? r.endPairing(conn, { code: 'lease_lost', message: 'another replica took the account' }) : r.dispose(conn, 'lease lost'));
    return;
  }
  if (answer === 'handover' && !conn.draining) {
    conn.draining = true;
    conn.drainingSince = Date.now();
    if (r.isPairing(conn)) r.supersedePairing(conn);
  }
  if (conn.draining && (conn.inFlight === 0 || Date.now() - conn.drainingSince > r.drainMaxMs)) void r.dispose(conn, 'handed over');
}

export async function releasingOnError<T>(o: { lease: SocketLease; holderId: string }, accountId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await o.lease.release(accountId, o.holderId).catch(() => undefined);
    throw error;
  }
}
