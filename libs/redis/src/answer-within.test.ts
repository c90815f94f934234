import { connect, createServer, type AddressInfo } from 'node:net';
import { answerWithin, NoAnswerError } from './answer-within.js';

/** Busy-waits `ms`: the event loop blocked, as a burst of requests blocks it. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

test('a work that never settles is refused after the deadline, naming what waited', async () => {
  await expect(answerWithin(new Promise(() => undefined), 20, 'rate limit')).rejects.toThrow(new NoAnswerError('rate limit', 20));
});

test('an answer waiting on the socket when a blocked event loop passes the deadline is read, not refused', async () => {
  // the server answers at once; the client does not read until the answer waits in its socket
  const server = createServer((socket) => socket.end('pong'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.pause();
  await new Promise((resolve) => socket.once('connect', resolve));
  await new Promise((resolve) => setTimeout(resolve, 50));
  try {
    const answered = new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString())));
    // from the check phase, busy past the deadline: the loop's next phase is its timers, before any read
    const answer = new Promise<string>((resolve, reject) =>
      setImmediate(() => {
        socket.resume();
        answerWithin(answered, 20, 'echo').then(resolve, reject);
        block(100);
      }),
    );
    await expect(answer).resolves.toBe('pong');
  } finally {
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a rejection passes through as it is', async () => {
  await expect(answerWithin(Promise.reject(new Error('NOSCRIPT')), 20, 'x')).rejects.toThrow('NOSCRIPT');
});
