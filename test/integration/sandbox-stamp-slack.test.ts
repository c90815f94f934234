import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import { buildSandbox } from '../../services/sandbox/src/app.js';
import { paceBreaches } from '../helpers/platform-record.js';
import type { SandboxMessage } from '../helpers/stack.js';

// The pace judge (paceBreaches) trusts the sandbox's stamps as far as their slack says: a request
// stamped at `receivedAt` came at most `stampSlackMs` earlier. postgres-outage.test.ts once
// failed on that trust: three accounts at once had 12 stamps in 1 s where 11 are allowed, their
// first gaps 8–32 ms, then the pace again, though the senders had written each account's requests
// an interval apart (a run of that test logging each request's write on the sender shows it). The
// sandbox's loop was held and stamped together what came meanwhile, with a slack that named no
// hold: while the loop is held no answer goes out, so a sender's open connections stay busy and
// its next requests open new ones, which the loop accepts after the hold and reads a pass later,
// past the beat that ended the hold. Here a thread of its own writes one account's requests an
// interval apart, each on a new connection (a sender on the pace by construction), while the
// sandbox's loop is held, on the real clock.

const INTERVAL_MS = 100;
const SENDS = 25;
const HOLD_MS = 350;
/** the requests written before the hold */
const HOLD_AFTER = 8;

/** Writes `count` requests to the sandbox, each on a connection of its own and at least `intervalMs` after the previous one left; answers when each left, once every answer came. */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { port, count, intervalMs } = workerData;
const written = [];
let answered = 0;
const done = () => written.length === count && answered === count && parentPort.postMessage({ written });
const send = (i) => {
  const body = JSON.stringify({ chatId: 'chat-' + i, part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1 });
  const headers = { authorization: 'Bearer paced-key', 'content-type': 'application/json', 'idempotency-key': 'k-' + i, 'content-length': Buffer.byteLength(body) };
  const req = http.request({ host: '127.0.0.1', port, path: '/v1/accounts/paced/messages', method: 'POST', agent: false, headers });
  // done once every answer came: every request is in the sandbox's record by then
  req.on('response', (res) => res.resume().on('end', () => (answered++, done())));
  req.on('error', (error) => parentPort.postMessage({ error: String(error) }));
  req.end(body, () => {
    written.push(Date.now());
    parentPort.postMessage({ wrote: written.length });
    if (i + 1 === count) return done();
    const next = () => (Date.now() - written[i] >= intervalMs ? send(i + 1) : setTimeout(next, intervalMs - (Date.now() - written[i])));
    next();
  });
};
send(0);
`;

function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the sandbox's event loop is held, as by a long garbage collection or a machine whose cores are taken
  }
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

let sandbox: FastifyInstance;
beforeEach(async () => {
  // no clock given: the real one, and the loop watch that says how late its stamps may be
  sandbox = await buildSandbox({ config: { limits: { latencyMs: 0, maxPerMinute: 0, burst: 1, slowModeSeconds: 0, faultRate: 0 }, seed: 1 } });
  await sandbox.listen({ port: 0, host: '127.0.0.1' });
});
afterEach(async () => {
  await sandbox.close();
});

test('requests written on the pace while the sandbox was held are no pace breach: the stamps read after the hold carry its slack', async () => {
  const port = (sandbox.server.address() as AddressInfo).port;
  const client = new Worker(CLIENT, { eval: true, workerData: { port, count: SENDS, intervalMs: INTERVAL_MS } });
  const done = new Promise<{ written?: number[]; error?: string }>((resolve) =>
    client.on('message', (m: { wrote?: number; written?: number[]; error?: string }) => {
      // mid-way the sandbox's loop is held, while the client goes on writing
      if (m.wrote === HOLD_AFTER) holdLoop(HOLD_MS);
      if (m.written || m.error) resolve(m);
    }),
  );
  const answer = await done;
  await client.terminate();
  expect(answer.error).toBeUndefined();
  const written = answer.written!;
  // the client kept the pace: every request left at least one interval after the one before
  expect(Math.min(...gaps(written))).toBeGreaterThanOrEqual(INTERVAL_MS);

  const items = (await sandbox.inject({ url: '/sandbox/messages?account=paced' }).then((r) => r.json())).items as SandboxMessage[];
  expect(items).toHaveLength(SENDS);
  // the hold bunched stamps (the case this test is about): three or more within 20 ms
  const stamps = items.map((m) => m.receivedAt).sort((a, b) => a - b);
  expect(Math.max(...stamps.map((t) => stamps.filter((u) => u >= t && u <= t + 20).length))).toBeGreaterThanOrEqual(3);
  // and the judge, reading each stamp's slack, finds no window over the pace
  expect(paceBreaches(items, 60_000 / INTERVAL_MS, 1)).toEqual([]);
}, 20_000);
