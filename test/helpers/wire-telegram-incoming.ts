import { Api } from 'telegram';
import { big, type Peers } from './wire-telegram-peers.js';

// The FAKE Telegram's messages to an account (wire-telegram.ts `writeToAccount`): a user writes to
// it in their private chat, and Telegram sends the account's session the update, in one of the two
// forms a real server uses: `updateShortMessage` (the user is known to the client: no entity sent)
// or `updates` carrying `updateNewMessage` and the user, with its access hash for the account.

export interface WireIncoming {
  /** the message's id and pts in the account's box (shared with what it sends) */
  id: number;
  pts: number;
  fromUserId: string;
  toUserId: string;
  text: string;
  form: 'short' | 'updates';
  /** the connection it was sent on; null: none of the account's sessions had called a method */
  connectionId: number | null;
  at: number;
}

/** The Updates a private message from `from` to `viewer` arrives as. */
export function privateMessageUpdates(
  peers: Peers,
  m: { viewer: bigint; from: bigint; text: string; id: number; pts: number; date: number; form: 'short' | 'updates' },
): Api.UpdateShortMessage | Api.Updates {
  if (m.form === 'short')
    return new Api.UpdateShortMessage({ out: false, id: m.id, userId: big(m.from), message: m.text, pts: m.pts, ptsCount: 1, date: m.date });
  // a private message carries no from_id: its peer is the sender
  const message = new Api.Message({ id: m.id, out: false, peerId: new Api.PeerUser({ userId: big(m.from) }), date: m.date, message: m.text });
  return new Api.Updates({
    updates: [new Api.UpdateNewMessage({ message, pts: m.pts, ptsCount: 1 })],
    users: [peers.userObject(m.viewer, m.from)],
    chats: [],
    date: m.date,
    seq: 0,
  });
}
