import { processSecrets, type CannotSendReason, type ChatDirectorySink, type DirectoryChat, type DirectorySyncState } from '@metronome/core';
import { MAX_ANSWER_BYTES } from './bounded-answer.js';
import type { HttpPool } from './http-pool.js';
import { postOnce } from './post-once.js';
import { requestTarget } from './request-target.js';
import type { TransportAccount } from './transport.js';

export interface HttpDirectoryOptions {
  pool: HttpPool;
  base: URL;
  timeoutMs: number;
  apiKey: (account: TransportAccount) => string | { message: string };
  now?: () => Date;
}

/** A listing stops here: more would be a platform paging without end. */
export const MAX_DIRECTORY_ENTRIES = 100_000;
const MAX_PAGES = 2_000;
const REASONS: readonly CannotSendReason[] = ['announce_only', 'left', 'removed', 'blocked', 'forbidden', 'not_found'];

type Page = { items: DirectoryChat[]; nextCursor: string | null };

/**
 * Lists an http account's chats (CONTRACT §5, "Chat directory") page by page; 404 means `unsupported`, other refusals `failed`.
 * Never throws for the platform or the network; the sink's own failures propagate.
 */
export async function syncHttpDirectory(o: HttpDirectoryOptions, account: TransportAccount, sink: ChatDirectorySink, signal?: AbortSignal): Promise<void> {
  const now = o.now ?? (() => new Date());
  const state = (s: DirectorySyncState) => sink.syncState(account.id, s, now());
  const failed = (reason: string) => state({ status: 'failed', reason: processSecrets().scrub(reason) });
  if (!account.externalId) return failed('the http account has no externalId');
  const apiKey = o.apiKey(account);
  if (typeof apiKey !== 'string') return failed(apiKey.message);

  const chats: DirectoryChat[] = [];
  let cursor: string | null = null;
  await state({ status: 'syncing', synced: 0 });
  for (let pages = 0; ; pages++) {
    if (signal?.aborted) return;
    if (pages >= MAX_PAGES || chats.length > MAX_DIRECTORY_ENTRIES)
      return failed(`the platform lists more than ${MAX_DIRECTORY_ENTRIES} chats or ${MAX_PAGES} pages`);
    const page = await fetchPage(o, account.externalId, apiKey, cursor);
    if ('unsupported' in page) return state({ status: 'unsupported', reason: 'the platform has no chat directory' });
    if ('failed' in page) return failed(page.failed);
    chats.push(...page.items);
    cursor = page.nextCursor;
    if (cursor === null) break;
    await state({ status: 'syncing', synced: chats.length });
  }
  await sink.replaceAll(account.id, chats, now());
  await state({ status: 'ok', size: chats.length });
}

async function fetchPage(
  o: HttpDirectoryOptions,
  externalId: string,
  apiKey: string,
  cursor: string | null,
): Promise<Page | { unsupported: true } | { failed: string }> {
  const answer = await postOnce({
    method: 'GET',
    pool: o.pool,
    target: () => {
      const url = new URL(`v1/accounts/${encodeURIComponent(externalId)}/chats`, o.base);
      if (cursor !== null) url.searchParams.set('cursor', cursor);
      return requestTarget(url);
    },
    headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
    body: Buffer.alloc(0),
    timeoutMs: o.timeoutMs,
    answer: (status, bytes) => ({ status, bytes }),
    notBuiltCode: 'request_not_built',
  });
  if ('failure' in answer) return { failed: `could not reach the platform (${answer.code}): ${answer.message}` };
  if ('oversized' in answer) return { failed: `the platform answered ${answer.status} with more than ${MAX_ANSWER_BYTES} bytes: not read` };
  if (answer.status === 404) return { unsupported: true };
  if (answer.status === 401) return { failed: "the platform refused the account's API key (401): give a new one with PATCH /v1/accounts/{id}" };
  if (answer.status !== 200) return { failed: `the platform answered ${answer.status} to the chat listing` };
  const page = readPage(answer.bytes);
  return page ?? { failed: 'the platform answered a chat listing this client cannot read' };
}

function readPage(bytes: Buffer): Page | null {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const { items, nextCursor } = body as { items?: unknown; nextCursor?: unknown };
  if (!Array.isArray(items) || !(nextCursor === null || nextCursor === undefined || (typeof nextCursor === 'string' && nextCursor.length > 0))) return null;
  const chats: DirectoryChat[] = [];
  for (const item of items) {
    const chat = readChat(item);
    if (!chat) return null;
    chats.push(chat);
  }
  return { items: chats, nextCursor: nextCursor ?? null };
}

const NOT_PRINTABLE = /[\u0000-\u001f\u007f-\u009f]|\p{Cs}/u;

function readChat(item: unknown): DirectoryChat | null {
  if (typeof item !== 'object' || item === null) return null;
  const i = item as Record<string, unknown>;
  const chatId = i['chatId'];
  if (typeof chatId !== 'string' || chatId.length === 0 || chatId.length > 256 || NOT_PRINTABLE.test(chatId)) return null;
  const title = i['title'] ?? null;
  if (title !== null && typeof title !== 'string') return null;
  const kind = i['kind'];
  if (kind !== 'group' && kind !== 'direct' && kind !== 'channel') return null;
  const memberCount = i['memberCount'] ?? null;
  if (memberCount !== null && !(Number.isSafeInteger(memberCount) && (memberCount as number) >= 0)) return null;
  const canSend = i['canSend'];
  if (typeof canSend !== 'boolean') return null;
  const given = i['cannotSendReason'];
  const reason = REASONS.includes(given as CannotSendReason) ? (given as CannotSendReason) : 'forbidden';
  return {
    chatId,
    title: title === null ? null : title.replace(/\u0000|\p{Cs}/gu, '').slice(0, 1_000),
    kind,
    memberCount: memberCount as number | null,
    canSend,
    cannotSendReason: canSend ? null : reason,
  };
}
