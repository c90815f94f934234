import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { call, campaignBody, createAccount, createTenant, startApi, type Api, type Tenant } from './harness.js';

// What the API answers before its handlers: requests Node's HTTP parser refuses, over a real
// socket (inject never reaches the parser), and bodies, media types and paths Fastify refuses.
// Every answer is the contract's error body, with nothing of the request in it. Bodies over a
// route's limit go over the socket as Node's own http client sends them.

const MEDIA_MAX = 4 * 1024 * 1024;
/** app.ts JSON_BODY_LIMIT */
const JSON_MAX = 4 * 1024 * 1024;

let api: Api;
let tenant: Tenant;
let port: number;
beforeAll(async () => {
  // a small media limit, so bodies well over it stay cheap to send twenty times
  api = await startApi('api_client_errors', { mediaMaxBytes: MEDIA_MAX });
  tenant = await createTenant(api, 'client-errors');
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  port = (api.app.server.address() as AddressInfo).port;
}, 30_000);
afterAll(async () => api.close());

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** Writes raw bytes and reads until the server closes (or answers one response in full). */
function raw(bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    const done = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const length = /content-length: (\d+)/i.exec(text);
      const bodyStart = text.indexOf('\r\n\r\n');
      if (length && bodyStart >= 0 && Buffer.byteLength(text.slice(bodyStart + 4)) >= Number(length[1])) {
        socket.destroy();
        done();
      }
    });
    socket.on('close', done);
    // the server may reset the socket after answering; what it wrote is still read above
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? undefined : reject(err)));
    setTimeout(() => socket.destroy(), 5000);
  });
}

const MARK = 'Zq7xMARK';

function expectContractError(res: RawAnswer, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers).toMatch(/content-type: application\/json/i);
  const body = JSON.parse(res.body);
  expect(body).toEqual({ error: { code, message: expect.any(String), details: [] } });
  expect(res.body).not.toContain(MARK);
  expect(res.body.length).toBeLessThan(300);
}

describe('requests the HTTP parser refuses', () => {
  test.each([
    ['a 70 KB token', 431, 'too_large', `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MARK}${'a'.repeat(70_000)}\r\n\r\n`],
    ['a 70 KB URL', 431, 'too_large', `GET /v1/${MARK}${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['NUL in a header', 400, 'bad_request', `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Note: ${MARK}\u0000\r\n\r\n`],
    ['\\x01 in a header', 400, 'bad_request', `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Note: ${MARK}\u0001\r\n\r\n`],
    ['header folding', 400, 'bad_request', `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Note: a\r\n ${MARK}\r\n\r\n`],
    ['Content-Length: -1', 400, 'bad_request', `POST /v1/campaigns HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n${MARK}`],
    [
      'Content-Length with chunked',
      400,
      'bad_request',
      `POST /v1/campaigns HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    ],
    ['a garbage request line', 400, 'bad_request', `${MARK} ${MARK}\r\n\r\n`],
    ['a space in the path', 400, 'bad_request', `GET /v1/${MARK} x HTTP/1.1\r\nHost: x\r\n\r\n`],
    ['HTTP/3.1', 505, 'bad_request', 'GET /healthz HTTP/3.1\r\nHost: x\r\n\r\n'],
  ])('%s → %d %s in the contract body, nothing echoed', async (_, status, code, bytes) => {
    expectContractError(await raw(bytes), status, code);
  });

  test('a URL over 8 KiB → 414, nothing echoed', async () => {
    const res = await raw(`GET /v1/campaigns?cursor=${MARK}${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\n\r\n`);
    expectContractError(res, 414, 'too_large');
  });

  test('an unknown route → 404 without its path', async () => {
    const res = await raw(`GET /v1/${MARK} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\nConnection: close\r\n\r\n`);
    expectContractError(res, 404, 'not_found');
  });

  test('the server keeps answering', async () => {
    const res = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
  });
});

describe('bodies, media types and paths refused before the handler', () => {
  const post = (url: string, contentType: string, payload: string) =>
    api.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${tenant.token}`, 'content-type': contentType }, payload });
  const campaigns = async () =>
    Number(
      (
        await api.db
          .selectFrom('campaigns')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  test.each(['application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json;charset="iso-8859-1"', 'application/json; charset='])(
    'a JSON body declared as %s → 415 naming content-type, nothing saved',
    async (contentType) => {
      const accountId = await createAccount(api, tenant);
      const before = await campaigns();
      const res = await post('/v1/campaigns', contentType, JSON.stringify(campaignBody(accountId)));
      expect(res.statusCode).toBe(415);
      expect(JSON.parse(res.body).error).toMatchObject({ code: 'unsupported_media_type', details: [{ field: 'content-type' }] });
      expect(await campaigns()).toBe(before);
    },
  );

  test.each(['application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset="utf-8"', 'application/json'])(
    '%s is read',
    async (contentType) => {
      const accountId = await createAccount(api, tenant);
      expect((await post('/v1/campaigns', contentType, JSON.stringify(campaignBody(accountId)))).statusCode).toBe(201);
    },
  );

  test('a media type no JSON route reads → 415 naming content-type', async () => {
    const res = await post('/v1/campaigns', 'application/xml', '<campaign/>');
    expect(res.statusCode).toBe(415);
    expect(JSON.parse(res.body).error.details).toEqual([{ field: 'content-type', message: 'expected application/json' }]);
  });

  test.each(['image', '/png', ';;;', 'image/'])('a malformed media type %j → 400 naming content-type, on JSON and media routes alike', async (contentType) => {
    for (const url of ['/v1/campaigns', '/v1/media']) {
      const res = await post(url, contentType, 'abc');
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body).error.details).toEqual([{ field: 'content-type', message: expect.not.stringContaining('application/json') }]);
    }
  });

  test('a body shorter than its Content-Length → 400 naming content-length', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/campaigns',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json', 'content-length': '50' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body).error.details).toEqual([{ field: 'content-length', message: expect.any(String) }]);
  });

  test.each([101, 5000])('a path id of %d characters → 404 without it', async (length) => {
    for (const route of ['campaigns', 'runs', 'accounts', 'media']) {
      const res = await call(api, 'GET', `/v1/${route}/${MARK}${'a'.repeat(length)}`, tenant.token);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String), details: [] } });
      expect(JSON.stringify(res.body)).not.toContain(MARK);
    }
  });
});

describe("a body over its route's limit, sent by Node's http client", () => {
  const ROUNDS = 20;
  // The reset came when the server closed while the client was still writing: the client's
  // next write failed (EPIPE) before it read the answer, which it reads once its body is sent.
  // Here each client reads nothing until then (as one busy writing in another process), so
  // a server that closes before it has read the body is caught every time, not by chance.

  interface Outcome {
    status: number;
    body: unknown;
    connection: string | undefined;
    /** the client's error before it had read the whole answer (EPIPE, ECONNRESET) */
    failed: string | null;
  }

  /**
   * POSTs `total` bytes in 64 KiB writes, as an upload does, and reads the answer once its body
   * is sent, or once the connection ends. `declared`: with a Content-Length, else chunked.
   */
  function send(path: string, contentType: string, total: number, declared: boolean): Promise<Outcome> {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    return new Promise((resolve) => {
      const failed = (status: number, body: unknown) => (err: NodeJS.ErrnoException) =>
        resolve({ status, body, connection: undefined, failed: err.code ?? err.message });
      const headers = { authorization: `Bearer ${tenant.token}`, 'content-type': contentType, ...(declared && { 'content-length': String(total) }) };
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), connection: res.headers.connection, failed: null }));
        res.on('error', failed(res.statusCode ?? 0, text));
      });
      req.on('error', failed(0, null));
      req.once('socket', (socket) => socket.pause());
      req.once('finish', () => req.socket?.resume());
      const writable = () =>
        new Promise<void>((go) => {
          const on = () => {
            req.off('drain', on).off('close', on);
            go();
          };
          req.on('drain', on).on('close', on);
        });
      void (async () => {
        for (let sent = 0; sent < total && !req.destroyed; sent += chunk.length) {
          if (!req.write(chunk.subarray(0, Math.min(chunk.length, total - sent)))) await writable();
        }
        if (!req.destroyed) req.end();
      })();
    });
  }

  const tooLarge = (limit: number): Outcome => ({
    status: 413,
    body: {
      error: { code: 'too_large', message: `the request body is larger than ${limit} bytes`, details: [{ field: 'body', message: `at most ${limit} bytes` }] },
    },
    connection: 'close',
    failed: null,
  });

  test.each([
    ['POST /v1/media with a Content-Length', '/v1/media', 'image/png', MEDIA_MAX, true],
    ['POST /v1/media chunked', '/v1/media', 'image/png', MEDIA_MAX, false],
    ['POST /v1/campaigns with a Content-Length', '/v1/campaigns', 'application/json', JSON_MAX, true],
    ['POST /v1/campaigns chunked', '/v1/campaigns', 'application/json', JSON_MAX, false],
  ])(
    '%s, three times its limit: the 413 and its body are read every time',
    async (_, path, type, limit, declared) => {
      const outcomes: Outcome[] = [];
      for (let i = 0; i < ROUNDS; i++) outcomes.push(await send(path, type, 3 * limit, declared));
      expect(outcomes).toEqual(Array.from({ length: ROUNDS }, () => tooLarge(limit)));
    },
    60_000,
  );

  test('a client that never reads is cut off after a few times the limit, not read to its declared GiB', async () => {
    const declared = 2 ** 30;
    const written = await new Promise<number>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunk = Buffer.alloc(256 * 1024, 'a');
      let accepted = 0;
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(accepted));
      socket.write(
        `POST /v1/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${tenant.token}\r\nContent-Type: image/png\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      const more = () => {
        while (!socket.destroyed && accepted < declared) {
          accepted += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', more);
        }
        socket.destroy();
      };
      more();
    });
    // what the server read after its answer (4 × MEDIA_MAX) and no more than the kernels buffer beyond it
    expect(written).toBeGreaterThanOrEqual(4 * MEDIA_MAX);
    expect(written).toBeLessThan(128 * 1024 * 1024);
    expect((await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(200);
  }, 60_000);
});
