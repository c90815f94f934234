// What WhatsApp lets an account do with new chats (CONTRACT §3, accounts, "New chats"), on its
// card: what holds them and until when, the cap's warnings, and lifting a 463 hold (asked first).
import type { Account } from '../api.js';
import { ErrorNote } from '../components.js';
import { time } from '../format.js';
import { useLift } from './account-fix.js';

export function NewChats({ account, onLifted }: { account: Account; onLifted: (a: Account) => void }) {
  const { confirming, setConfirming, busy, failure, lift } = useLift(account, onLifted);
  const info = account.newChats;
  const held = info?.held ?? null;
  const cap = info?.cap ?? null;
  const warned = cap && (cap.status === 'FIRST_WARNING' || cap.status === 'SECOND_WARNING') ? cap : null;
  if (!held && !warned) return null;
  return (
    <div class="fix" data-new-chats>
      {held && (
        <p>
          New chats held{held.until ? ` until ${time(held.until)}` : ''}: {held.detail}
        </p>
      )}
      {!held && warned && (
        <p>
          WhatsApp warns about messages to people who have not answered ({warned.status === 'FIRST_WARNING' ? 'first' : 'second'} warning
          {warned.total !== null ? `, ${warned.used ?? '?'} of ${warned.total} used` : ''}
          {warned.cycleEndsAt ? ` until ${time(warned.cycleEndsAt)}` : ''}): new chats stop when the cap is reached.
        </p>
      )}
      {held?.reason === 'new_chats_refused' &&
        (confirming ? (
          <div class="actions" role="group" aria-label="Confirm lift the hold on new chats">
            <span>Write to new chats again? WhatsApp may refuse them again, which worsens the restriction.</span>
            <button type="button" class="danger" disabled={busy} onClick={() => void lift()}>
              Yes, lift the hold
            </button>
            <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
              Keep holding
            </button>
          </div>
        ) : (
          <button type="button" onClick={() => setConfirming(true)}>
            Lift the hold on new chats
          </button>
        ))}
      <ErrorNote error={failure} />
    </div>
  );
}
