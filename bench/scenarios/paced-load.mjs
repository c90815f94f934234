import http from 'node:http';

// Requests at a constant rate, evenly spaced: one every 1000/rate ms whether or not earlier ones
// have answered (an open loop, as wrk2 does), over at most `connections` keep-alive sockets, each
// latency measured from the moment its request was due. autocannon's `overallRate` sends each
// connection's share back to back at the start of every second: 50 a second over 10
// connections arrive as a burst of 10 at a time, which measures a burst, not the rate.

/**
 * `path()` for each request, `rate` a second for `seconds`, against `baseUrl` with `headers`.
 * Latencies (ms) sorted, answers by status, and requests that could not be sent on time for
 * want of a free connection (counted from their due time all the same).
 */
export async function pacedLoad({ baseUrl, path, rate, seconds, connections = 10, headers = {} }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const url = new URL(baseUrl);
  const total = Math.round(rate * seconds);
  const intervalMs = 1000 / rate;
  const latencies = [];
  const statuses = {};
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const dueAt = started + i * intervalMs;
    const wait = dueAt - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      new Promise((resolve) => {
        const req = http.get({ host: url.hostname, port: url.port, path: path(), headers, agent }, (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - dueAt);
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
            resolve();
          });
        });
        req.on('error', () => {
          statuses.error = (statuses.error ?? 0) + 1;
          resolve();
        });
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] * 10) / 10;
  return { requests: total, rate: total / ((performance.now() - started) / 1000), statuses, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) };
}
