// The fake platform's chat directories (CONTRACT §5, "Chat directory"): what `GET /v1/accounts/:account/chats` lists.
import { seededRandom } from './random.js';

export interface SandboxChat {
  chatId: string;
  title: string | null;
  kind: 'group' | 'direct';
  memberCount: number | null;
  canSend: boolean;
}

/** Chats every account lists until a test replaces them (SANDBOX_DIRECTORY_SIZE). */
export const DEFAULT_DIRECTORY_SIZE = 60;
/** Most entries in one page; fewer when their JSON would pass PAGE_BYTES. */
export const MAX_PAGE_SIZE = 500;
/** A page stays well under the 64 KiB a client reads of an answer. */
const PAGE_BYTES = 48 * 1024;

const PLACES = [
  'Riverside',
  'Northside',
  'Harbour',
  'Old Town',
  'Lakeview',
  'Hillcrest',
  'Café Lumière',
  'São Paulo',
  'Zürich',
  'Greenway',
  'Maple Street',
  'Westend',
];
const GROUPS = [
  'Book Club',
  'Running Crew',
  'Parents',
  'Choir',
  'Chess Club',
  'Neighbours',
  'Volunteers',
  'Market Stalls',
  'Football',
  'Garden Share',
  'Photo Walks',
  'Regulars',
];
const FIRST = ['Ana', 'José', 'Zoë', 'Mateo', 'Chloé', 'Lukas', 'Aiko', 'Noah', 'Inês', 'Omar', 'Léa', 'Sven'];
const LAST = ['Souza', 'Álvarez', 'Müller', 'Rossi', 'Dubois', 'Nakamura', 'Okafor', 'Novák', 'Kowalski', 'Haddad', 'Lindqvist', 'Brennan'];

/** `chat-1`…`chat-N` (the ids the demo and tests send to), titled by the seed; every sixth a direct chat, the rest groups. */
export function defaultDirectory(seed: number, size: number): SandboxChat[] {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  return Array.from({ length: size }, (_, i) => {
    const n = i + 1;
    if (n % 6 === 0) return { chatId: `chat-${n}`, title: `${pick(FIRST)} ${pick(LAST)}`, kind: 'direct', memberCount: 2, canSend: true };
    return { chatId: `chat-${n}`, title: `${pick(PLACES)} ${pick(GROUPS)}`, kind: 'group', memberCount: 3 + Math.floor(random() * 248), canSend: true };
  });
}

type Custom = { chats: SandboxChat[] | null; pageSize: number; forbidden: Set<string> };

/** Every account's directory: the default one, or what `PUT /sandbox/accounts/:account/directory` set. */
export class SandboxDirectories {
  private readonly custom = new Map<string, Custom>();
  private defaults: SandboxChat[];

  constructor(
    seed: number,
    private size = DEFAULT_DIRECTORY_SIZE,
  ) {
    this.defaults = defaultDirectory(seed, size);
  }

  /** Back to the default directories of `seed` (and of `size`, when given). */
  reset(seed: number, size = this.size): void {
    this.custom.clear();
    this.size = size;
    this.defaults = defaultDirectory(seed, size);
  }

  /** Replaces an account's directory; null: the account has none (its listing answers 404). */
  set(account: string, chats: SandboxChat[] | null, pageSize = MAX_PAGE_SIZE): { chats: number | null; pageSize: number } {
    const forbidden = new Set((chats ?? []).filter((c) => !c.canSend).map((c) => c.chatId));
    this.custom.set(account, { chats, pageSize, forbidden });
    return { chats: chats?.length ?? null, pageSize };
  }

  of(account: string): SandboxChat[] | null {
    const custom = this.custom.get(account);
    return custom ? custom.chats : this.defaults;
  }

  /** Whether the account's directory says it cannot send to the chat (its sends answer 403 forbidden). */
  forbids(account: string, chatId: string): boolean {
    return this.custom.get(account)?.forbidden.has(chatId) ?? false;
  }

  /** A page at `cursor` (an offset this returned); null when the account has no directory, 'bad-cursor' for a foreign cursor. */
  page(account: string, cursor: string | undefined): { items: SandboxChat[]; nextCursor: string | null } | null | 'bad-cursor' {
    const chats = this.of(account);
    if (chats === null) return null;
    const from = cursor === undefined ? 0 : /^\d{1,9}$/.test(cursor) ? Number(cursor) : NaN;
    if (!Number.isInteger(from) || from > chats.length) return 'bad-cursor';
    const max = this.custom.get(account)?.pageSize ?? MAX_PAGE_SIZE;
    const items: SandboxChat[] = [];
    let bytes = 0;
    for (let i = from; i < chats.length && items.length < max; i++) {
      bytes += Buffer.byteLength(JSON.stringify(chats[i])) + 1;
      if (items.length > 0 && bytes > PAGE_BYTES) break;
      items.push(chats[i]!);
    }
    const next = from + items.length;
    return { items, nextCursor: next < chats.length ? String(next) : null };
  }
}
