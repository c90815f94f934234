import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpTransport, type OutgoingMessage, type TransportAccount } from '@metronome/transports';

// Whether a failed request had been written whole is what tells a send that may have reached
// the platform (`ambiguous`: the target becomes `unknown`, never re-sent) from one that surely
// did not (`retriable`). Two fake platforms on the two sides of that line: one hangs up after
// reading the headers of a body far larger than the kernel's socket buffers (so the body cannot
// have left), one reads the whole body and never answers.

const account: TransportAccount = { id: 'account-1', externalId: 'acc-1', credentials: { apiKey: 'written-test-key-0123456789' } };

function message(text: string): OutgoingMessage {
  return { chatId: 'chat-1', part: { type: 'text', text }, partIndex: 0, partCount: 1, idempotencyKey: 'run-1:chat-1:0' };
}

async function platform(onRequest: (req: http.IncomingMessage) => void): Promise<{ base: string; close: () => Promise<void> }> {
  const server = http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('hung up after the headers of a 32 MiB body: not written, so retried, never ambiguous', async () => {
  let headersSeen = 0;
  const p = await platform((req) => {
    headersSeen++;
    req.socket.destroy();
  });
  const transport = new HttpTransport({ baseUrl: p.base, timeoutMs: 10_000 });
  try {
    const result = await transport.send(account, message('x'.repeat(32 * 1024 * 1024)));
    expect(headersSeen).toBe(1);
    expect(result).toMatchObject({ kind: 'retriable' });
  } finally {
    await transport.close();
    await p.close();
  }
});

test('the whole body read and no answer: the timeout counts as written, so ambiguous', async () => {
  let bodyBytes = 0;
  let bodyEnded = false;
  const p = await platform((req) => {
    req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
    req.on('end', () => (bodyEnded = true));
  });
  // The timeout must come after the platform read the whole body: on a busy machine (CI, two
  // cores) 300 ms was not always enough, and the send then failed before its body had left.
  const transport = new HttpTransport({ baseUrl: p.base, timeoutMs: 3_000 });
  try {
    const text = 'y'.repeat(256 * 1024);
    const result = await transport.send(account, message(text));
    expect(bodyEnded).toBe(true);
    expect(bodyBytes).toBeGreaterThan(text.length);
    expect(result).toMatchObject({ kind: 'ambiguous', code: 'timeout' });
  } finally {
    await transport.close();
    await p.close();
  }
}, 15_000);

test('the whole body read, then the connection closed with no answer: written, so ambiguous', async () => {
  let bodyEnded = false;
  const p = await platform((req) => {
    req.resume();
    req.on('end', () => {
      bodyEnded = true;
      req.socket.destroy();
    });
  });
  const transport = new HttpTransport({ baseUrl: p.base, timeoutMs: 10_000 });
  try {
    const result = await transport.send(account, message('z'.repeat(256 * 1024)));
    expect(bodyEnded).toBe(true);
    expect(result).toMatchObject({ kind: 'ambiguous', code: 'econnreset' });
  } finally {
    await transport.close();
    await p.close();
  }
});

test('onWritten: told once, when the request left; never for a request that did not leave', async () => {
  const told: string[] = [];
  const p = await platform((req) => {
    req.resume();
    req.on('end', () => {
      told.push('platform read it');
      req.socket.destroy();
    });
  });
  const transport = new HttpTransport({ baseUrl: p.base, timeoutMs: 3_000 });
  try {
    expect(transport.reportsWrites).toBe(true);
    const result = await transport.send(account, { ...message('hello'), onWritten: () => told.push('written') });
    expect(told.filter((t) => t === 'written')).toHaveLength(1);
    expect(result).toMatchObject({ kind: 'ambiguous' });
    // an account without its id: nothing is written, nothing told
    const none = await transport.send({ ...account, externalId: null }, { ...message('hello'), onWritten: () => told.push('written again') });
    expect(none.kind).not.toBe('delivered');
    expect(told).not.toContain('written again');
  } finally {
    await transport.close();
    await p.close();
  }
});
