import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

// A TEST TOOL: a tiny SOCKS5 proxy (RFC 1928, CONNECT only; login RFC 1929 when `login` is set)
// on 127.0.0.1, logging every connection it is asked for: the destination as the client named
// it, whether it was carried, and the bytes each way. `route` sends a destination elsewhere (a
// local listener standing in for the platform's server, which this machine cannot reach).

export interface ProxiedConnection {
  /** host:port as the client asked (a domain name for socks5h, an address otherwise) */
  destination: string;
  carried: boolean;
  bytesUp: number;
  bytesDown: number;
}

export interface TestSocks5Proxy {
  port: number;
  connections: ProxiedConnection[];
  /** logins refused */
  refusedLogins: number;
  close(): Promise<void>;
}

export async function startTestSocks5Proxy(
  opts: { login?: { user: string; password: string }; route?: (destination: string) => { host: string; port: number } | null } = {},
): Promise<TestSocks5Proxy> {
  const sockets = new Set<Socket>();
  const proxy: TestSocks5Proxy = { port: 0, connections: [], refusedLogins: 0, close: async () => undefined };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffer = Buffer.alloc(0);
    let stage: 'greeting' | 'login' | 'request' | 'done' = 'greeting';
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (stage === 'greeting') {
        if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return;
        const methods = [...buffer.subarray(2, 2 + buffer[1]!)];
        buffer = buffer.subarray(2 + buffer[1]!);
        const wanted = opts.login ? 0x02 : 0x00;
        if (!methods.includes(wanted)) return void client.end(Buffer.from([5, 0xff]));
        client.write(Buffer.from([5, wanted]));
        stage = opts.login ? 'login' : 'request';
      }
      if (stage === 'login') {
        if (buffer.length < 2) return;
        const ulen = buffer[1]!;
        if (buffer.length < 3 + ulen || buffer.length < 3 + ulen + buffer[2 + ulen]!) return;
        const user = buffer.subarray(2, 2 + ulen).toString('utf8');
        const password = buffer.subarray(3 + ulen, 3 + ulen + buffer[2 + ulen]!).toString('utf8');
        buffer = buffer.subarray(3 + ulen + buffer[2 + ulen]!);
        if (user !== opts.login!.user || password !== opts.login!.password) {
          proxy.refusedLogins++;
          return void client.end(Buffer.from([1, 1]));
        }
        client.write(Buffer.from([1, 0]));
        stage = 'request';
      }
      if (stage === 'request') {
        if (buffer.length < 5) return;
        const type = buffer[3]!;
        const addrLen = type === 1 ? 4 : type === 4 ? 16 : 1 + buffer[4]!;
        if (buffer.length < 4 + addrLen + 2) return;
        const addr = buffer.subarray(4, 4 + addrLen);
        const host = type === 1 ? [...addr].join('.') : type === 4 ? addr.toString('hex').replace(/(.{4})(?!$)/g, '$1:') : addr.subarray(1).toString('utf8');
        const port = buffer.readUInt16BE(4 + addrLen);
        const rest = buffer.subarray(4 + addrLen + 2);
        stage = 'done';
        client.off('data', onData);
        const entry: ProxiedConnection = { destination: `${host}:${port}`, carried: false, bytesUp: 0, bytesDown: 0 };
        proxy.connections.push(entry);
        const target = opts.route?.(entry.destination) ?? { host, port };
        const upstream = connect(target.port, target.host, () => {
          entry.carried = true;
          client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
          if (rest.length) upstream.write(rest);
          client.on('data', (d: Buffer) => (entry.bytesUp += d.length));
          upstream.on('data', (d: Buffer) => (entry.bytesDown += d.length));
          client.pipe(upstream).pipe(client);
        });
        sockets.add(upstream);
        upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
        upstream.on('error', () => (entry.carried ? client.destroy() : client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))));
      }
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.port = (server.address() as AddressInfo).port;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return proxy;
}

/** A TEST TOOL: a TCP listener standing in for a platform's server; counts the connections and bytes it receives. */
export async function startRecordingListener(): Promise<{ port: number; connections: number; bytes: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { port: 0, connections: 0, bytes: 0, close: (): Promise<void> => Promise.resolve() };
  const server = createServer((s) => {
    state.connections++;
    sockets.add(s);
    s.on('data', (d: Buffer) => (state.bytes += d.length));
    s.on('error', () => s.destroy());
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return state;
}

/** A port nothing listens on (bound, then closed): a proxy there refuses every connection. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A GramJS session string for Telegram's data centre 2 with a random auth key: GramJS connects
 * with it at once, without a key exchange (the traffic is unreadable to anyone, which is enough
 * to see where it goes).
 */
export async function gramjsTestSession(): Promise<string> {
  const { StringSession } = await import('telegram/sessions/index.js');
  const { AuthKey } = await import('telegram/crypto/AuthKey.js');
  const { randomBytes } = await import('node:crypto');
  const session = new StringSession('');
  session.setDC(2, TELEGRAM_DC2, 443);
  const key = new AuthKey();
  await key.setKey(randomBytes(256));
  session.setAuthKey(key);
  return session.save();
}

/** Telegram's data centre 2, as GramJS knows it. */
export const TELEGRAM_DC2 = '149.154.167.51';
