// What an idle stack costs: a stack of two senders (libs/testkit's startStack, from dist: run
// `node infra/build.mjs` first) on a clone of the given template database, left alone 5 s after
// it is ready, then each process's CPU over 30 s (/proc/<pid>/stat), as a share of one core.
//   node bench/stack-idle.mjs <template database name>
import { createScratchDatabase, startStack } from '../libs/testkit/dist/index.js';
import { cpuSeconds as cpu } from './probe-process.mjs';

const template = process.argv[2];
if (!template) throw new Error('usage: node bench/stack-idle.mjs <template database name>');
const db = await createScratchDatabase('postgres://postgres@127.0.0.1:5432/postgres', 'idle_probe', template);
const stack = await startStack({ databaseUrl: db.url, redisUrl: 'redis://127.0.0.1:6379', keyPrefix: `idle-${process.pid}`, senders: 2 });
try {
  await new Promise((r) => setTimeout(r, 5_000));
  const before = stack.services.map((s) => cpu(s.child.pid));
  await new Promise((r) => setTimeout(r, 30_000));
  const after = stack.services.map((s) => cpu(s.child.pid));
  console.log(stack.services.map((s, i) => `${s.name} ${(((after[i] - before[i]) / 30) * 100).toFixed(2)} %`).join('  '));
} finally {
  await stack.stop();
  await db.drop();
}
