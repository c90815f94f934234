import net from 'node:net';

/**
 * A real TCP proxy in front of PostgreSQL or Redis that a test can cut (the port refuses and
 * every open connection drops, as when the server goes away) and restore on the same port.
 */
export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const makeServer = () =>
    net.createServer((client) => {
      const upstream = net.connect(targetPort, targetHost);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
  const listen = (server: net.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
    });
  let server: net.Server | null = makeServer();
  const port = await listen(server, 0);
  const cut = async () => {
    const s = server;
    server = null;
    if (!s) return;
    const closed = [...sockets].map((socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve()))));
    for (const socket of sockets) socket.destroy();
    await Promise.all([new Promise<void>((resolve) => s.close(() => resolve())), ...closed]);
  };
  return {
    port,
    cut,
    restore: async () => {
      if (server) return;
      server = makeServer();
      await listen(server, port);
    },
    close: cut,
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function viaProxy(url: string, proxy: TcpProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
