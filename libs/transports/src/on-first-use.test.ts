import type { SendResult } from '@metronome/core';
import { onFirstUse, transportOnFirstUse } from './on-first-use.js';
import { TELEGRAM_USER_SHAPE } from './platform-shapes.js';
import type { Transport } from './transport.js';

const account = { id: 'a1', externalId: 'x', credentials: {} };

/** A transport of the telegram_user shape that records its calls. */
function recording(calls: string[], shape: Partial<Transport> = TELEGRAM_USER_SHAPE): Transport {
  return {
    platform: 'telegram_user',
    ...shape,
    prepareMedia: async () => ({ ok: true, ref: 'r' }) as never,
    readiness: async () => ({ ready: true }),
    showTyping: async () => void calls.push('typing'),
    syncDirectory: async () => void calls.push('directory'),
    send: async () => (calls.push('send'), { outcome: 'sent' } as unknown as SendResult),
    close: async () => void calls.push('close'),
  } as Transport;
}

test('built once, on the first call, however many calls come together', async () => {
  let builds = 0;
  const calls: string[] = [];
  const transport = transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => (builds++, recording(calls)));
  expect(builds).toBe(0);
  expect(transport.platform).toBe('telegram_user');
  expect(transport.typingLastsMs).toBe(TELEGRAM_USER_SHAPE.typingLastsMs);
  await Promise.all([transport.send(account, {} as never), transport.send(account, {} as never), transport.showTyping!(account, 'c', {} as never)]);
  expect(builds).toBe(1);
  expect(calls.sort()).toEqual(['send', 'send', 'typing']);
  await transport.close();
  expect(calls).toContain('close');
});

test('never used: closing builds nothing', async () => {
  let builds = 0;
  const transport = transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => (builds++, recording([])));
  await transport.close();
  expect(builds).toBe(0);
});

test('a build that failed is tried again on the next call', async () => {
  let builds = 0;
  const calls: string[] = [];
  const transport = transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => {
    if (builds++ === 0) throw new Error('library missing');
    return recording(calls);
  });
  await expect(transport.send(account, {} as never)).rejects.toThrow('library missing');
  await transport.send(account, {} as never);
  expect(builds).toBe(2);
  expect(calls).toEqual(['send']);
});

test('a transport built unlike its shape, or without an optional method, is refused', async () => {
  const unlike = transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => recording([], { ...TELEGRAM_USER_SHAPE, typingLastsMs: 1 }));
  await expect(unlike.send(account, {} as never)).rejects.toThrow('differs from its shape in typingLastsMs');
  const lacking = transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => ({ ...recording([]), syncDirectory: undefined }) as Transport);
  await expect(lacking.send(account, {} as never)).rejects.toThrow('lacks readiness, showTyping or syncDirectory');
});

test('onFirstUse: loaded() is null until the first get', async () => {
  const once = onFirstUse(async () => 42);
  expect(once.loaded()).toBeNull();
  expect(await once.get()).toBe(42);
  expect(await once.loaded()).toBe(42);
});
