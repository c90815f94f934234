import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Readiness } from './readiness.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** `/metrics`, `/healthz` and `/readyz` for the services without an HTTP API; without `ready`, `/readyz` answers as `/healthz`. */
export async function startMetricsServer(
  registry: Registry,
  port: number,
  host = '0.0.0.0',
  health: () => boolean = () => true,
  ready: () => Promise<Readiness> = async () => ({ ok: health() }),
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/readyz') {
      ready()
        .catch((error: Error): Readiness => ({ ok: false, reason: error.message }))
        .then((answer) => {
          res.writeHead(answer.ok ? 200 : 503, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer));
        });
      return;
    }
    if (req.method === 'GET' && req.url === '/metrics') {
      registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        })
        .catch((error: Error) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(error.message);
        });
      return;
    }
    if (req.method === 'GET' && req.url === '/healthz') {
      const ok = health();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'no such route' } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
