// The /sandbox control API: tests configure limits and faults, then read back what was received.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from '@metronome/config';
import { accountPatch, chatPatch, configPatch, describeIssues, directoryBody, listQuery, receiptsPatch } from './schemas.js';
import type { ApiKeys } from './api-keys.js';
import type { SandboxReceipts } from './receipts.js';
import type { SandboxState } from './state.js';

type ChatParams = { Params: { account: string; chat: string } };
type AccountParams = { Params: { account: string } };

export async function controlRoutes(app: FastifyInstance, deps: { state: SandboxState; keys: ApiKeys; receipts: SandboxReceipts }): Promise<void> {
  const { state, keys, receipts } = deps;

  const parse = <S extends z.ZodType>(schema: S, value: unknown, reply: FastifyReply): z.infer<S> | undefined => {
    const result = schema.safeParse(value ?? {});
    if (result.success) return result.data;
    void reply.code(400).send({ error: 'invalid_request', detail: describeIssues(result.error) });
    return undefined;
  };

  app.get('/sandbox/config', async () => state.config());

  app.put('/sandbox/config', async (req, reply) => {
    const patch = parse(configPatch, req.body, reply);
    return patch && state.updateConfig(patch);
  });

  // Each account shows whether it has an API key (never the key) and whether it echoes one.
  app.get('/sandbox/accounts', async () => ({ items: state.accountViews().map((a) => ({ ...a, ...keys.view(a.account) })) }));

  app.put<AccountParams>('/sandbox/accounts/:account', async (req, reply) => {
    const patch = parse(accountPatch, req.body, reply);
    if (!patch) return undefined;
    const { apiKey, fakeEchoAuthorization, ...limits } = patch;
    const account = req.params.account;
    if (apiKey !== undefined) keys.set(account, apiKey);
    if (fakeEchoAuthorization !== undefined) keys.setFakeEcho(account, fakeEchoAuthorization);
    return { ...state.configureAccount(account, limits), ...keys.view(account) };
  });

  // The account's chat directory (canSend false: sends answer 403 forbidden; null: the listing answers 404).
  app.put<AccountParams>('/sandbox/accounts/:account/directory', { bodyLimit: 32 * 1024 * 1024 }, async (req, reply) => {
    const body = parse(directoryBody, req.body, reply);
    return body && state.directories.set(req.params.account, body.chats, body.pageSize);
  });

  app.get<AccountParams>('/sandbox/accounts/:account/directory', async (req) => ({ chats: state.directories.of(req.params.account) }));

  app.get<AccountParams>('/sandbox/accounts/:account/sends', async (req) => ({ times: state.sendTimes(req.params.account) }));

  app.put<ChatParams>('/sandbox/chats/:account/:chat', async (req, reply) => {
    const patch = parse(chatPatch, req.body, reply);
    return patch && state.configureChat(req.params.account, req.params.chat, patch);
  });

  app.get<ChatParams>('/sandbox/chats/:account/:chat', async (req) => {
    const { account, chat } = req.params;
    return { account, chatId: chat, settings: state.chatSettings(account, chat), items: state.messages({ account, chat }) };
  });

  app.get('/sandbox/messages', async (req, reply) => {
    const q = parse(listQuery, req.query, reply);
    return q && { items: state.messages(q) };
  });

  app.get('/sandbox/rejections', async (req, reply) => {
    const q = parse(listQuery, req.query, reply);
    return q && { items: state.rejections(q) };
  });

  app.get('/sandbox/duplicates', async () => ({ items: state.duplicateKeys() }));

  app.get<{ Params: { mediaRef: string } }>('/sandbox/media/:mediaRef', async (req, reply) => {
    const record = state.mediaRecord(req.params.mediaRef);
    return record ?? reply.code(404).send({ error: 'not_found' });
  });

  // As a platform that restarted: every ref sent after this answers 400 media_ref_invalid.
  app.delete('/sandbox/media', async () => state.forgetMedia());

  app.get('/sandbox/stats', async () => state.stats());

  // Receipts (receipts.ts): where they go, their delays and faults; and every one posted.
  app.put('/sandbox/receipts', async (req, reply) => {
    const patch = parse(receiptsPatch, req.body, reply);
    return patch && receipts.update(patch);
  });
  app.get('/sandbox/receipts', async () => ({ config: receipts.config(), ...receipts.view() }));

  app.post('/sandbox/reset', async () => {
    state.reset();
    keys.reset();
    receipts.reset();
    return { ok: true };
  });
}
