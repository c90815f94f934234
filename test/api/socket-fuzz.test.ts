import net from 'node:net';
import fc from 'fast-check';
import { freePort, startService, type ServiceProcess } from '@metronome/testkit';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

// Hostile networks: thousands of malformed HTTP requests, as raw bytes over TCP to a real API
// process (inject never reaches Node's HTTP parser). Every answer is the contract's error
// body and echoes nothing of the request; the process never dies; /readyz stays 200.

const REQUESTS = 2_000;
const IN_PARALLEL = 20;
// marks every piece of input, so an answer that echoes the request is caught
const MARK = 'Qx9MARK';

let db: TestDatabase;
let api: ServiceProcess;
let port: number;
beforeAll(async () => {
  db = await createTestDatabase('socket_fuzz');
  port = await freePort();
  api = startService('api', 'services/control-api/dist/server.js', {
    DATABASE_URL: db.url,
    REDIS_URL,
    KEY_PREFIX: uniquePrefix('fuzz'),
    HOST: '127.0.0.1',
    PORT: String(port),
    ADMIN_TOKEN: `adm_${'f'.repeat(24)}`,
    // every request here fails authentication: let them reach the routes, not the 429
    AUTH_FAILURES_PER_MINUTE: '1000000',
    API_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  await api.waitForLog((l) => l['msg'] === 'control-api listening');
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await db?.drop();
}, 30_000);

/** Writes the bytes, reads until the server closes or one whole response is in. */
function exchange(bytes: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => done(), 10_000);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const text = Buffer.concat(chunks).toString('latin1');
      const length = /\r\ncontent-length: (\d+)/i.exec(text);
      const bodyAt = text.indexOf('\r\n\r\n');
      if (length && bodyAt >= 0 && text.length - bodyAt - 4 >= Number(length[1])) done();
    });
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', done);
  });
}

const printable = fc.string({ unit: fc.constantFrom(...'abcXYZ019-_/.:;=?&%~ '.split('')), maxLength: 30 });
const hostile = fc.string({
  unit: fc.oneof(fc.constantFrom('\r', '\n', '\u0000', '\u0001', '\u001f', '\u007f', '\u0085', '\u00ff', ' ', '\t', ':'), fc.constantFrom(...'aZ9'.split(''))),
  minLength: 1,
  maxLength: 12,
});
const method = fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'HEAD', 'OPTIONS', 'G\u0000T', 'POST /', 'get', '');
const path = fc.oneof(
  fc.constantFrom('/v1/me', '/v1/campaigns', '/v1/runs', '/v1/accounts', '/v1/events', '/v1/media'),
  printable.map((p) => `/v1/${MARK}${p}`),
  hostile.map((h) => `/v1/${MARK}${h}`),
  fc.integer({ min: 9_000, max: 80_000 }).map((n) => `/v1/${MARK}${'a'.repeat(n)}`),
);
const version = fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/3.1', 'HTTP/1.x', 'HTP/1.1', 'HTTP/1.1 extra', '');
const header = fc.oneof(
  fc.tuple(printable, printable).map(([n, v]) => `X-${n.replace(/[^A-Za-z0-9-]/g, '') || 'N'}: ${MARK}${v}`),
  fc.tuple(hostile, hostile).map(([n, v]) => `${n}: ${MARK}${v}`),
  hostile.map((v) => `X-Note: ${MARK}${v}`),
  fc.constantFrom(
    'Content-Length: -1',
    'Content-Length: abc',
    'Content-Length: 1\r\nContent-Length: 2',
    'Transfer-Encoding: chunked\r\nContent-Length: 3',
    'Transfer-Encoding: gzip, chunked',
    ' folded',
    'Content-Type: application/json; charset=utf-16',
  ),
  fc.integer({ min: 9_000, max: 80_000 }).map((n) => `Authorization: Bearer ${MARK}${'b'.repeat(n)}`),
  printable.map((v) => `Authorization: Bearer mtr_${MARK}${v}`),
);
const body = fc.oneof(
  fc.constant(''),
  printable.map((p) => `{"name":"${MARK}${p}"`),
  hostile.map((h) => `${MARK}${h}`),
  fc.constant('0\r\n\r\n'),
  fc.constant('zz\r\nbad chunk\r\n'),
);

const request = fc.tuple(method, path, version, fc.array(header, { minLength: 0, maxLength: 6 }), body, fc.boolean()).map(([m, p, v, hs, b, lf]) => {
  const eol = lf ? '\n' : '\r\n';
  return Buffer.from(`${m} ${p} ${v}${eol}Host: x${eol}${hs.join(eol)}${hs.length ? eol : ''}${eol}${b}`, 'latin1');
});

function isContractError(text: string): boolean {
  const at = text.indexOf('\r\n\r\n');
  if (!/^HTTP\/1\.[01] [1-5]\d\d /.test(text) || at < 0) return false;
  const status = Number(text.slice(9, 12));
  if (status < 400) return false;
  try {
    const parsed = JSON.parse(text.slice(at + 4)) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    return typeof parsed.error?.code === 'string' && typeof parsed.error.message === 'string' && Array.isArray(parsed.error.details);
  } catch {
    return false;
  }
}

test(`${REQUESTS} malformed requests over raw TCP: every answer is the contract's error body, nothing echoed, the process lives, /readyz stays 200`, async () => {
  const requests = fc.sample(request, { numRuns: REQUESTS, seed: 42 });
  const bad: { request: string; answer: string }[] = [];
  const silent: string[] = [];
  for (let i = 0; i < requests.length; i += IN_PARALLEL) {
    const batch = requests.slice(i, i + IN_PARALLEL);
    const answers = await Promise.all(batch.map(exchange));
    answers.forEach((answer, j) => {
      // HEAD answers carry no body by definition
      const isHead = batch[j]!.toString('latin1').startsWith('HEAD ');
      if (answer === '') silent.push(batch[j]!.toString('latin1').slice(0, 200));
      else if ((!isHead && !isContractError(answer)) || answer.includes(MARK))
        bad.push({ request: batch[j]!.toString('latin1').slice(0, 200), answer: answer.slice(0, 300) });
    });
  }
  expect(bad.slice(0, 5)).toEqual([]);
  // a request the server cannot even parse still gets an answer, not a dropped connection
  expect(silent).toEqual([]);
  expect(api.child.exitCode).toBeNull();
  expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
}, 180_000);
