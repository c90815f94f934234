// One socket's events, wired to the pool's caches and hooks.
import { incomingTexts } from './incoming.js';
import type { Connection } from './connection.js';
import { followDirectory } from './directory-events.js';
import type { WhatsAppDirectory } from './directory-sync.js';
import type { GroupMetadataCache } from './group-metadata-cache.js';
import { withBothIdentities } from './lid-identity.js';
import type { MessageStatuses } from './message-status.js';
import type { NewChats } from './new-chats.js';
import type { WhatsAppSocketPoolOptions } from './socket-pool-options.js';
import type { WhatsAppSocket, WhatsAppSocketEvents } from './socket.js';

export interface SocketEventTargets {
  options: WhatsAppSocketPoolOptions;
  groups: GroupMetadataCache;
  statuses: MessageStatuses;
  newChats: NewChats;
  directory: WhatsAppDirectory;
  opened(conn: Connection): void;
  closed(conn: Connection, error: Error | undefined): void;
}

export function followSocket(conn: Connection, socket: WhatsAppSocket, onQr: (qr: string) => void, to: SocketEventTargets): void {
  const { options: o, groups } = to;
  const on = <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) =>
    socket.ev.on(event, (arg) => {
      // A pairing replaces its socket after the phone accepted: the old one's events are history.
      if (conn.socket === socket) listener(arg);
    });
  on('creds.update', (update) => {
    Object.assign(conn.auth.state.creds, update);
    conn.auth.saveCreds().catch((err: unknown) => o.logger.error({ err, accountId: conn.accountId }, 'whatsapp credentials not saved'));
  });
  on('groups.update', (updates) => {
    for (const g of updates) if (g.id) groups.invalidate(conn.accountId, g.id);
  });
  on('group-participants.update', (u) => groups.invalidate(conn.accountId, u.id));
  const onText = o.onIncomingText;
  if (onText)
    on('messages.upsert', (u) => incomingTexts(u.messages).forEach((m) => onText(conn.accountId, withBothIdentities(m, socket.signalRepository?.lidMapping))));
  if (conn.kind === 'send')
    to.statuses.follow(
      on,
      conn.accountId,
      () => socket.signalRepository?.lidMapping,
      () => socket.user,
    );
  // a retry receipt, read before Baileys' own handler re-sends the message (its dispatch order)
  if (conn.kind === 'send')
    socket.ws.on('CB:receipt,type:retry', (frame) => conn.socket === socket && frame.attrs['id'] && to.statuses.resending(conn.accountId, frame.attrs['id']));
  if (conn.kind === 'send') to.newChats.follow(on, conn.accountId, socket);
  if (conn.kind === 'send' && o.directory)
    followDirectory(
      on,
      conn.accountId,
      () => socket.user,
      to.directory,
      () => socket.signalRepository?.lidMapping,
    );
  on('connection.update', (update) => {
    if (update.qr) onQr(update.qr);
    if (update.connection === 'open') to.opened(conn);
    if (update.connection === 'close') to.closed(conn, update.lastDisconnect?.error);
  });
}
