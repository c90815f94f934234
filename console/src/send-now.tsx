// A campaign's reach in words, and the question asked before a save or an activation that
// would send within the next minute ("Send to 8 chats now?"): nothing goes out by surprise.
import type { CampaignReach, Occurrence } from './api.js';

/** How soon counts as "now": a first run starting within this long is confirmed first. */
const SOON_MS = 60_000;

/** Whether the first of these runs (as the API works them out) starts within the next minute. */
export function sendsSoon(occurrences: Occurrence[], now = Date.now()): boolean {
  const first = occurrences[0];
  return first !== undefined && Date.parse(first.startsAt) <= now + SOON_MS;
}

const chats = (n: number) => (n === 1 ? '1 chat' : `${n} chats`);

/** "8 chats" and how they add up: picked + audience members − suppressed − can't post. */
export function ReachBreakdown({ reach }: { reach: CampaignReach }) {
  return (
    <span class="reach">
      <strong>{chats(reach.reach)}</strong>{' '}
      <span class="muted">
        ({reach.targets} picked + {reach.audienceMembers} audience {reach.audienceMembers === 1 ? 'member' : 'members'} − {reach.suppressed} suppressed −{' '}
        {reach.cannotPost} can't post)
      </span>
    </span>
  );
}

interface AskProps {
  reach: CampaignReach;
  /** what Yes does, in words on its button */
  yes: string;
  onYes: () => void;
  onNo: () => void;
}

/** The question before sending at once, with the reach and its breakdown; Yes sends, Not yet changes nothing. */
export function SendNowQuestion({ reach, yes, onYes, onNo }: AskProps) {
  return (
    <div role="group" aria-label="Confirm sending now" class="confirm send-now" tabIndex={-1} id="send-now">
      <p>
        <strong>Send to {chats(reach.reach)} now?</strong> The first run starts within a minute: <ReachBreakdown reach={reach} />.
      </p>
      <button type="button" class="primary" onClick={onYes}>
        {yes}
      </button>{' '}
      <button type="button" onClick={onNo}>
        Not yet
      </button>
    </div>
  );
}
