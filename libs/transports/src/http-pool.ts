import type { Socket } from 'node:net';
import { buildConnector, Pool } from 'undici';

/**
 * Keep-alive connections to one origin (undici's Pool), whose sockets tell when a request's
 * body has left this process.
 *
 * undici rather than node:http because a send costs its client about half the CPU
 * (bench/micro/http-post.mjs). But undici's own "request sent" fires as soon as the body is
 * handed to the socket, which may still hold it in memory (a large upload): that is not
 * "written". node:http's 'finish' waits for the socket's write callback of the last byte, so we
 * keep exactly that: each request's body goes out as a Buffer of its own (`watch`), and the
 * sockets this pool opens pass a callback with that Buffer's write, which runs once the kernel
 * took its last byte.
 */
export class HttpPool {
  private readonly pool: Pool;
  /** each request's own body Buffer, until the socket wrote it: what to call then */
  private readonly flushes = new WeakMap<Buffer, () => void>();

  constructor(origin: URL, maxSockets: number) {
    const connect = buildConnector({});
    this.pool = new Pool(origin.origin, {
      connections: maxSockets,
      pipelining: 1,
      // our own timer bounds a whole request (postOnce); these would only add codes of their own
      headersTimeout: 0,
      bodyTimeout: 0,
      connect: (options, callback) =>
        connect(options, (...answer) => {
          if (answer[1]) this.watchWrites(answer[1]);
          callback(...answer);
        }),
    });
  }

  /** `body` as a Buffer of this request alone (same bytes, no copy); `flushed` runs once its last byte left. */
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
        // A socket destroyed first reports its cancelled writes without an error: node:http
        // does not count those as written either (its 'finish' waits on no socket error).
        if (!error && !this.destroyed) flushed();
      });
    } as Socket['write'];
  }
}
