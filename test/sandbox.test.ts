// The sandbox as a real process, the way `npm start` and the end-to-end tests run it.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { eventually } from '@metronome/testkit';

const MAIN = fileURLToPath(new URL('../services/sandbox/dist/main.js', import.meta.url));

interface Running {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  stderr: () => string;
}

function startSandbox(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const entry = JSON.parse(line) as { msg?: string; url?: string; port?: number };
      if (entry.msg === 'sandbox listening' && entry.url) resolve({ child, base: entry.url, exited, stderr: () => stderr });
    });
    void exited.then((code) => reject(new Error(`sandbox exited (${code}) before listening: ${stderr}`)));
  });
}

/** Polls `check` until it holds; the process is real, so there is no clock to drive. */
const waitFor = (what: string, check: () => Promise<boolean>, timeoutMs = 5_000) => eventually(what, check, timeoutMs, 20);

/** Account `acc`'s API key: its first request registers it (CONTRACT §5). */
const AUTH = 'Bearer sandbox-test-key-0001';

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as Record<string, any> });

describe('sandbox process', () => {
  let running: Running | undefined;
  afterEach(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    running = undefined;
  });

  it('listens on a free port, logs its URL and port, and speaks the platform protocol', async () => {
    running = await startSandbox({ SANDBOX_PORT: '0', SANDBOX_MAX_PER_MINUTE: '30' });
    const { base } = running;
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await json(await fetch(`${base}/healthz`))).toEqual({ status: 200, body: { ok: true } });
    expect((await json(await fetch(`${base}/sandbox/config`))).body).toMatchObject({ maxPerMinute: 30 });

    const post = (key: string) =>
      fetch(`${base}/v1/accounts/acc/messages`, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ chatId: 'c1', part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 }),
      });
    expect(await json(await post('r:c1:0'))).toEqual({ status: 200, body: { messageId: 'msg-1' } });
    const second = await json(await post('r:c2:0'));
    expect(second).toMatchObject({ status: 429, body: { error: 'flood_wait' } });
    expect(second.body['retryAfterSeconds']).toBeGreaterThanOrEqual(1);
    expect((await json(await fetch(`${base}/sandbox/chats/acc/c1`))).body['items']).toHaveLength(1);
  });

  it('on SIGTERM answers a hung request and exits 0', async () => {
    running = await startSandbox({ SANDBOX_PORT: '0' });
    const { base, child, exited } = running;
    await fetch(`${base}/sandbox/chats/acc/c1`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hangNextMs: 600_000 }),
    });
    const hung = fetch(`${base}/v1/accounts/acc/messages`, {
      method: 'POST',
      headers: { authorization: AUTH, 'content-type': 'application/json', 'idempotency-key': 'r:c1:0' },
      body: JSON.stringify({ chatId: 'c1', part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 }),
    });
    // The send is recorded on arrival and only its answer is held back.
    await waitFor('the hung send to arrive', async () => (await json(await fetch(`${base}/sandbox/chats/acc/c1`))).body['settings']?.received === 1);
    child.kill('SIGTERM');
    expect((await hung).status).toBe(200);
    expect(await exited).toBe(0);
  });

  it('records each message as in flight (answeredAt null) until its answer is written after latency and hang', async () => {
    running = await startSandbox({ SANDBOX_PORT: '0', SANDBOX_LATENCY_MS: '50' });
    const { base } = running;
    await fetch(`${base}/sandbox/chats/acc/slow`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hangNextMs: 400 }),
    });
    const post = (chatId: string) =>
      fetch(`${base}/v1/accounts/acc/messages`, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'application/json', 'idempotency-key': `r:${chatId}:0` },
        body: JSON.stringify({ chatId, part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 }),
      });
    const messages = async () =>
      (await json(await fetch(`${base}/sandbox/messages`))).body['items'] as { chatId: string; receivedAt: number; answeredAt: number | null }[];
    const slow = post('slow');
    await waitFor('the slow send to arrive', async () => (await messages()).length === 1);
    expect((await post('fast')).status).toBe(200);
    const during = await messages();
    expect(during.map((m) => [m.chatId, m.answeredAt === null])).toEqual([
      ['slow', true],
      ['fast', false],
    ]);
    expect((await slow).status).toBe(200);
    const after = await messages();
    expect(after[0]!.answeredAt! - after[0]!.receivedAt).toBeGreaterThanOrEqual(450);
    expect(after[1]!.answeredAt! - after[1]!.receivedAt).toBeGreaterThanOrEqual(50);
    expect(after.map((m) => m.receivedAt)).toEqual(during.map((m) => m.receivedAt));
  });

  it('answers 400 media_ref_invalid to a ref it never issued and, after DELETE /sandbox/media, to one it forgot', async () => {
    running = await startSandbox({ SANDBOX_PORT: '0' });
    const { base } = running;
    const bytes = Buffer.from('png-bytes');
    const sha = createHash('sha256').update(bytes).digest('hex');
    const upload = await json(
      await fetch(`${base}/v1/accounts/acc/media`, {
        method: 'POST',
        headers: { authorization: AUTH, 'content-type': 'image/png', 'x-media-sha256': sha },
        body: bytes,
      }),
    );
    const ref = upload.body['mediaRef'] as string;
    const sendMedia = async (mediaRef: string, key: string) =>
      json(
        await fetch(`${base}/v1/accounts/acc/messages`, {
          method: 'POST',
          headers: { authorization: AUTH, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ chatId: 'c1', part: { type: 'media', mediaRef }, partIndex: 0, partCount: 1 }),
        }),
      );
    expect(await sendMedia('m-never-issued', 'r:c1:0')).toMatchObject({ status: 400, body: { error: 'media_ref_invalid' } });
    expect((await sendMedia(ref, 'r:c2:0')).status).toBe(200);
    expect(await json(await fetch(`${base}/sandbox/media`, { method: 'DELETE' }))).toEqual({ status: 200, body: { forgotten: 1 } });
    expect(await sendMedia(ref, 'r:c3:0')).toMatchObject({ status: 400, body: { error: 'media_ref_invalid' } });
  });

  it('refuses a request for an account with a key other than the one it registered, or none: 401 unauthorized, nothing delivered', async () => {
    running = await startSandbox({ SANDBOX_PORT: '0' });
    const { base } = running;
    const send = async (authorization: string | null, chatId: string) =>
      json(
        await fetch(`${base}/v1/accounts/owned/messages`, {
          method: 'POST',
          headers: { ...(authorization !== null && { authorization }), 'content-type': 'application/json', 'idempotency-key': `r:${chatId}:0` },
          body: JSON.stringify({ chatId, part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 }),
        }),
      );
    const upload = async (authorization: string) =>
      (
        await fetch(`${base}/v1/accounts/owned/media`, {
          method: 'POST',
          headers: { authorization, 'content-type': 'image/png', 'x-media-sha256': 'x' },
          body: 'x',
        })
      ).status;
    // the first request registers the owner's key
    expect((await send('Bearer owner-key-0000000001', 'c1')).status).toBe(200);
    expect(await send('Bearer intruder-key-000000002', 'c2')).toEqual({ status: 401, body: { error: 'unauthorized', detail: expect.any(String) } });
    expect(await send(null, 'c3')).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect(await upload('Bearer intruder-key-000000002')).toBe(401);
    expect((await send('Bearer owner-key-0000000001', 'c4')).status).toBe(200);
    const received = (await json(await fetch(`${base}/sandbox/messages?account=owned`))).body['items'] as { chatId: string }[];
    expect(received.map((m) => m.chatId)).toEqual(['c1', 'c4']);
    const refused = (await json(await fetch(`${base}/sandbox/rejections?account=owned`))).body['items'] as {
      chatId: string | null;
      reason: string;
      error: string;
    }[];
    expect(refused).toEqual([
      expect.objectContaining({ chatId: 'c2', reason: 'unauthorized', error: 'unauthorized' }),
      expect.objectContaining({ chatId: 'c3', reason: 'unauthorized', error: 'unauthorized' }),
      expect.objectContaining({ chatId: null, reason: 'unauthorized', error: 'unauthorized' }),
    ]);
    // the account's view says it has a key, and never shows it
    const accounts = JSON.stringify((await json(await fetch(`${base}/sandbox/accounts`))).body);
    expect(accounts).toContain('"hasApiKey":true');
    expect(accounts).not.toContain('owner-key');
  });

  it('refuses a bad variable, naming it', async () => {
    const child = spawn(process.execPath, [MAIN], { env: { ...process.env, SANDBOX_FAULT_RATE: '2' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('SANDBOX_FAULT_RATE="2": expected a number from 0 to 1');
  });
});
