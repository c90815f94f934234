// The sender's CPU per HTTP send, alone: N sends through HttpTransport.send to a minimal local
// platform, `parallel` at a time, and the client process's user+system CPU per send.
//
//   npm run build --silent && node bench/micro/http-post.mjs [N=20000] [parallel=32] [accounts=20]
//
// The platform runs in a child process, so this process's cpuUsage() is the client's alone.
// A warm-up of 2,000 sends (sockets opened, code compiled) is left out of the figure.
//
// COMPARE_WITH=<another build's http-transport.js> measures that build too, in the same process,
// in alternating rounds of N/10 sends each: the machine's load moves both figures alike, so
// their ratio holds even where the absolute figures drift (a shared machine).
import { fork } from 'node:child_process';
import http from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ANSWER = Buffer.from(JSON.stringify({ messageId: 'm-1' }));
const ROUNDS = 10;

if (process.argv[2] === '--platform') {
  // The platform: reads the body, answers 200 with a message id, keeps the connection alive.
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': ANSWER.length });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
} else {
  await main();
}

async function main() {
  const total = Number(process.argv[2] ?? 20_000);
  const parallel = Number(process.argv[3] ?? 32);
  const accounts = Number(process.argv[4] ?? 20);
  const builds = [{ name: 'this build', module: '../../libs/transports/dist/http-transport.js' }];
  if (process.env.COMPARE_WITH) builds.push({ name: process.env.COMPARE_WITH, module: pathToFileURL(resolve(process.env.COMPARE_WITH)).href });

  const platform = fork(fileURLToPath(import.meta.url), ['--platform'], { stdio: 'inherit' });
  const { port } = await new Promise((ready) => platform.once('message', ready));
  const accountList = Array.from({ length: accounts }, (_, i) => ({
    id: `account-${i}`,
    externalId: `acc-${i}`,
    credentials: { apiKey: `bench-key-${i}-0123456789abcdef` },
  }));
  for (const build of builds) {
    const { HttpTransport } = await import(build.module);
    build.transport = new HttpTransport({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000 });
    build.cpuUs = 0;
    build.wallMs = 0;
    build.failed = 0;
  }

  // `count` sends, `parallel` lanes; returns how many were not delivered
  const sendMany = async (transport, count) => {
    let next = 0;
    let failed = 0;
    const lane = async () => {
      while (next < count) {
        const i = next++;
        const result = await transport.send(accountList[i % accounts], {
          chatId: `chat-${i}`,
          part: { type: 'text', text: 'Hello from the benchmark, a message of ordinary length.' },
          partIndex: 0,
          partCount: 1,
          idempotencyKey: `run-1:chat-${i}:0`,
        });
        if (result.kind !== 'delivered') failed++;
      }
    };
    await Promise.all(Array.from({ length: parallel }, lane));
    return failed;
  };

  for (const build of builds) await sendMany(build.transport, 2_000);
  const perRound = Math.ceil(total / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of builds) {
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      build.failed += await sendMany(build.transport, perRound);
      build.wallMs += Number(process.hrtime.bigint() - t0) / 1e6;
      const cpu = process.cpuUsage(cpu0);
      build.cpuUs += cpu.user + cpu.system;
    }
  }
  for (const build of builds) await build.transport.close();
  platform.kill();

  const sends = perRound * ROUNDS;
  for (const build of builds) {
    console.log(
      JSON.stringify({
        build: build.name,
        sends,
        parallel,
        accounts,
        failed: build.failed,
        cpuUsPerSend: Number((build.cpuUs / sends).toFixed(1)),
        sendsPerSecond: Math.round(sends / (build.wallMs / 1000)),
      }),
    );
    if (build.failed > 0) process.exitCode = 1;
  }
}
