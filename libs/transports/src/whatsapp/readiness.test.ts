import { HandedOn } from './handed-on.js';
import { WhatsAppTransport } from './whatsapp-transport.js';

// The transport's readiness over a stand-in of its pool's three answers (the pool itself runs for real in
// test/platforms/whatsapp-send.test.ts): what this replica's holder just let go is left to the replica taking it.
test('an account this replica let go is left to another for the patience, though its lease is free; then ready', async () => {
  let now = 0;
  const handedOn = new HandedOn({ now: () => now }, 10_000);
  const pool = { letGo: async (a: string) => (handedOn.mark(a), true), isOpen: () => false, heldElsewhere: async () => false, handedOn };
  const t = new WhatsAppTransport({ pool, clock: { now: () => now }, timeoutMs: 1_000 } as never);
  expect(await t.readiness('acc')).toEqual({ ready: true });
  expect(await t.letGo('acc')).toBe(true);
  for (; now < 10_000; now += 600) expect(await t.readiness('acc')).toMatchObject({ ready: false, retryAfterMs: 500 });
  expect(await t.readiness('acc')).toEqual({ ready: true });
  // an account never let go here, with a free lease, is ready at once
  expect(await t.readiness('other')).toEqual({ ready: true });
});
