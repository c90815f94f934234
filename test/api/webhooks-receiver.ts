import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A webhook receiver on a real port that can go down (connections refused) and come back on
// the same port, and a signature check written from the Standard Webhooks specification,
// independently of libs/core.

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  payload: any;
  path: string;
}

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** what the receiver answers */
  status = 200;
  /** TCP connections accepted, answered or not */
  connections = 0;
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(public port: number) {}

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(0);
    await receiver.up();
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Listens (again) on the same port. */
  async up(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (this.status >= 200 && this.status < 300) {
          this.received.push({
            id: String(req.headers['webhook-id']),
            timestamp: String(req.headers['webhook-timestamp']),
            signature: String(req.headers['webhook-signature']),
            body,
            payload: JSON.parse(body),
            path: req.url ?? '',
          });
        }
        res.writeHead(this.status).end();
      });
    });
    server.on('connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening: connections to the port are refused until up(). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  close(): Promise<void> {
    return this.down();
  }
}

/**
 * Standard Webhooks verification: `webhook-signature` is a space-separated list of
 * `v1,<base64>`; one of them must be HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed with
 * the base64-decoded part of `whsec_<base64>`.
 */
export function signatureValid(secret: string, r: Pick<Received, 'id' | 'timestamp' | 'signature' | 'body'>): boolean {
  if (!/^whsec_/.test(secret) || !/^\d+$/.test(r.timestamp)) return false;
  const key = Buffer.from(secret.split('_')[1]!, 'base64');
  const expected = createHmac('sha256', key).update(`${r.id}.${r.timestamp}.${r.body}`).digest();
  return r.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
