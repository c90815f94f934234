import type { Socket } from 'node:net';
import { buildConnector, Pool } from 'undici';

/**
 * Keep-alive connections to one origin (undici, about half node:http's CPU per send). undici's "request sent" fires when the body
 * is handed to the socket, not written; each body is its own Buffer (`watch`), flushed when the kernel took its last byte.
 */
export class HttpPool {
  private readonly pool: Pool;
  private readonly flushes = new WeakMap<Buffer, () => void>();

  constructor(origin: URL, maxSockets: number) {
    const connect = buildConnector({});
    this.pool = new Pool(origin.origin, {
      connections: maxSockets,
      pipelining: 1,
      // our own timer bounds a whole request (postOnce)
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: (options, callback) =>
        connect(options, (...answer) => {
          if (answer[1]) this.watchWrites(answer[1]);
          callback(...answer);
        }),
    });
  }

  watch(body: Buffer, flushed: () => void): Buffer {
    const own = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.flushes.set(own, flushed);
    return own;
  }

  dispatch: Pool['dispatch'] = (options, handler) => this.pool.dispatch(options, handler);

  close(): Promise<void> {
    return this.pool.destroy();
  }

  private watchWrites(socket: Socket): void {
    const write = socket.write;
    const flushes = this.flushes;
    socket.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
      const flushed = chunk instanceof Buffer ? flushes.get(chunk) : undefined;
      if (!flushed) return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      flushes.delete(chunk as Buffer);
      return (write as (chunk: Buffer, callback: (error?: Error | null) => void) => boolean).call(this, chunk as Buffer, (error) => {
        // A destroyed socket reports cancelled writes without an error: not written, as for node:http.
        if (!error && !this.destroyed) flushed();
      });
    } as Socket['write'];
  }
}
