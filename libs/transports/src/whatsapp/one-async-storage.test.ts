import { spawnSync } from 'node:child_process';

// In a plain Node process (jest's VM modules copy the built-ins): the WhatsApp entry point loads Baileys, five sockets'
// key stores run transactions, and every AsyncLocalStorage that really ran is counted.
const script = (install: boolean) => `
import asyncHooks from 'node:async_hooks';
const ran = new Set();
const run = asyncHooks.AsyncLocalStorage.prototype.run;
asyncHooks.AsyncLocalStorage.prototype.run = function (...args) { ran.add(this); return run.apply(this, args); };
${install ? "await import('@metronome/transports/whatsapp');" : ''}
const { addTransactionCapability } = await import('@whiskeysockets/baileys');
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, child: () => quiet, level: 'silent' };
const stores = Array.from({ length: 5 }, () => {
  const data = new Map();
  const keys = {
    get: async (type, ids) => Object.fromEntries(ids.filter((id) => data.has(type + id)).map((id) => [id, data.get(type + id)])),
    set: async (set) => { for (const [type, byId] of Object.entries(set)) for (const [id, v] of Object.entries(byId)) data.set(type + id, v); },
  };
  return { data, keys: addTransactionCapability(keys, quiet, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) };
});
const seen = [];
await Promise.all(stores.map((s, i) => s.keys.transaction(async () => {
  await s.keys.set({ session: { me: 'socket ' + i } });
  await new Promise((r) => setTimeout(r, 5));
  // inside its own transaction a store reads its own write; the others' stay apart
  seen.push([(await s.keys.get('session', ['me'])).me, stores.filter((o) => o !== s && o.keys.isInTransaction()).length]);
}, 'account-' + i)));
console.log(JSON.stringify({ storages: ran.size, seen: seen.sort(), written: stores.map((s) => s.data.get('sessionme')) }));
`;

function measure(install: boolean): { storages: number; seen: [string, number][]; written: string[] } {
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script(install)], { encoding: 'utf8', cwd: process.cwd() });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').pop()!);
}

test("Baileys' key transactions of five sockets run on one AsyncLocalStorage, each kept apart, where alone they make five", () => {
  const installed = measure(true);
  expect(installed.storages).toBe(1);
  expect(installed.seen).toEqual([0, 1, 2, 3, 4].map((i) => [`socket ${i}`, 0]));
  expect(installed.written).toEqual([0, 1, 2, 3, 4].map((i) => `socket ${i}`));
  expect(measure(false).storages).toBe(5);
}, 60_000);
