import { ManualClock } from '@metronome/core';
import { SentMessages, type SentMessageStore } from './sent-messages.js';

const quiet = { warn: () => undefined } as never;
const clock = new ManualClock(0);

/** A store in memory that can be told to fail. */
function memoryStore() {
  const rows = new Map<string, { message: Buffer; sentAt: Date }>();
  let failing = false;
  const store: SentMessageStore = {
    remember: async (a, id, message, sentAt) => {
      if (failing) throw new Error('store down');
      rows.set(`${a}:${id}`, { message, sentAt });
    },
    find: async (a, id, since) => {
      const row = rows.get(`${a}:${id}`);
      return row && row.sentAt >= since ? row.message : null;
    },
  };
  return { store, rows, fail: (on: boolean) => (failing = on) };
}

describe('SentMessages', () => {
  test('answers by account and message id', async () => {
    const sent = new SentMessages({ clock, logger: quiet });
    sent.remember('a', '3EB0AA', { conversation: 'hello' });
    expect(await sent.get('a', '3EB0AA')).toEqual({ conversation: 'hello' });
    expect(await sent.get('b', '3EB0AA')).toBeUndefined();
    expect(await sent.get('a', '3EB0BB')).toBeUndefined();
  });

  test('keeps the newest messages in memory up to its bound, dropping the oldest first', async () => {
    const sent = new SentMessages({ clock, logger: quiet, max: 3 });
    for (const id of ['1', '2', '3']) sent.remember('a', id, { conversation: id });
    // sent again: now the newest
    sent.remember('a', '1', { conversation: '1 again' });
    sent.remember('a', '4', { conversation: '4' });
    expect(await sent.get('a', '2')).toBeUndefined();
    expect(await sent.get('a', '1')).toEqual({ conversation: '1 again' });
    expect(await sent.get('a', '3')).toEqual({ conversation: '3' });
    expect(await sent.get('a', '4')).toEqual({ conversation: '4' });
  });

  test('with a store: another instance answers while the message is kept, not after', async () => {
    const { store, fail } = memoryStore();
    const here = new SentMessages({ clock, logger: quiet, store, keepMs: 86_400_000 });
    const there = new SentMessages({ clock, logger: quiet, store, keepMs: 86_400_000 });
    here.remember('a', '3EB0AA', { conversation: 'hello' });
    await here.flush();
    clock.advance(6 * 3_600_000);
    expect(await there.get('a', '3EB0AA')).toMatchObject({ conversation: 'hello' });
    clock.advance(18 * 3_600_000 + 1);
    expect(await there.get('a', '3EB0AA')).toBeUndefined();
    // a failed write is only logged: the send stands, memory still answers here
    fail(true);
    here.remember('a', '3EB0BB', { conversation: 'later' });
    await here.flush();
    expect(await here.get('a', '3EB0BB')).toEqual({ conversation: 'later' });
    expect(await there.get('a', '3EB0BB')).toBeUndefined();
  });
});
