import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@metronome/testkit';
import { trustTelegramServerKey } from '@metronome/transports/telegram-user';
import { Api, errors, helpers, TelegramClient } from 'telegram';
import { Logger, LogLevel } from 'telegram/extensions/Logger.js';
import { StringSession } from 'telegram/sessions/index.js';
import { MtprotoWire, RpcFailure, type RpcHandler } from '../helpers/wire-telegram-mtproto.js';

// The FAKE Telegram servers on the wire (test/helpers/wire-telegram-mtproto.ts) against the REAL
// GramJS TelegramClient: its key exchange, MTProto 2.0 crypto, request queue, error classes,
// update dispatch, DC switch and reconnects all run as they do against Telegram. What GramJS
// does on a lost answer, a stalled connection and an unknown auth key (-404) is pinned here.

const SELF = new Api.User({ id: helpers.returnBigInt(777), self: true, firstName: 'Wire', accessHash: helpers.returnBigInt(1) });
const dropped = new Set<number>();

/** users.getUsers answers Vector<User>: vector#1cb5c415, the count, the items */
const tlVector = (items: Api.User[]) => ({
  getBytes: () => Buffer.concat([Buffer.from([0x15, 0xc4, 0xb5, 0x1c]), Buffer.from(new Int32Array([items.length]).buffer), ...items.map((i) => i.getBytes())]),
});

/** Telegram's side for these tests: help.getCountriesList's lang_code says how to answer. */
const handle: RpcHandler = async (ctx, request) => {
  if (request instanceof Api.users.GetUsers) return tlVector([SELF]); // GramJS's getMe (update dispatch, reconnect)
  if (request instanceof Api.help.GetNearestDc) return new Api.NearestDc({ country: 'NL', thisDc: ctx.dcId, nearestDc: ctx.dcId });
  if (request instanceof Api.help.GetCountriesList) {
    if (request.langCode === 'flood') throw new RpcFailure(420, 'FLOOD_WAIT_30');
    if (request.langCode === 'forbidden') throw new RpcFailure(400, 'CHAT_WRITE_FORBIDDEN');
    if (request.langCode === 'hang') return 'hang';
    if (request.langCode === 'drop-once' && !dropped.has(request.hash)) {
      dropped.add(request.hash);
      return 'drop';
    }
    return new Api.help.CountriesList({ countries: [], hash: request.hash });
  }
  throw new RpcFailure(400, 'NOT_IN_THIS_TEST');
};

let wire: MtprotoWire;
const clients: TelegramClient[] = [];
beforeAll(async () => {
  wire = await MtprotoWire.start({ dcIds: [2, 4], handle });
  trustTelegramServerKey(wire.serverKeyPem);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
});
afterAll(async () => {
  await wire?.close();
});

function sessionAt(dcId: number, server = wire): StringSession {
  const session = new StringSession('');
  session.setDC(dcId, server.ipOf(dcId), 80);
  return session;
}

/** GramJS's log silent (its constructor logs before setLogLevel could) */
function newClient(session: StringSession): TelegramClient {
  const client = new TelegramClient(session, 1, 'hash', {
    connectionRetries: 1,
    floodSleepThreshold: 0,
    retryDelay: 100,
    baseLogger: new Logger(LogLevel.NONE),
  });
  clients.push(client);
  return client;
}

async function connected(session: StringSession): Promise<TelegramClient> {
  const client = newClient(session);
  expect(await client.connect()).toBe(true);
  return client;
}

async function minted(dcId = 2): Promise<{ authKeyId: string; client: TelegramClient }> {
  const { authKeyId, key } = await wire.mintAuthKey(dcId);
  return { authKeyId, client: await connected(new StringSession(await wire.sessionString(dcId, key))) };
}

/** GramJS's warnings and errors from now on, as `level message` */
function captureLog(client: TelegramClient): string[] {
  const logged: string[] = [];
  const log = client.logger;
  log.setLevel(LogLevel.WARN);
  log.log = (level: LogLevel, message: string) => void logged.push(`${level} ${message}`);
  return logged;
}

const keyOf = (client: TelegramClient): string => client.session.getAuthKey()!.keyId!.toString();
const countries = (langCode: string, hash: number) => new Api.help.GetCountriesList({ langCode, hash });
const since = (from: number) => wire.requests.slice(from);

test('a fresh client makes an auth key with the server (its RSA key trusted) and its requests reach handle unwrapped, with their fields', async () => {
  const from = wire.requests.length;
  const client = await connected(sessionAt(2));
  const keyId = keyOf(client);
  expect(wire.dcOfKey(keyId)).toBe(2);

  const nearest = await client.invoke(new Api.help.GetNearestDc());
  expect(nearest).toBeInstanceOf(Api.NearestDc);
  expect(nearest).toMatchObject({ country: 'NL', thisDc: 2 });
  const list = await client.invoke(countries('nl', 4242));
  expect(list).toBeInstanceOf(Api.help.CountriesList);
  expect((list as Api.help.CountriesList).hash).toBe(4242);

  const seen = since(from);
  expect(seen.map((r) => r.request.className)).toEqual([
    'ReqPqMulti',
    'ReqDHParams',
    'SetClientDHParams',
    'help.GetConfig',
    'help.GetNearestDc',
    'help.GetCountriesList',
  ]);
  const connectionId = seen[0]!.ctx.connectionId;
  expect(seen.slice(0, 3).map((r) => r.ctx)).toEqual(Array(3).fill({ dcId: 2, authKeyId: '0', connectionId }));
  expect(seen.slice(3).map((r) => r.ctx)).toEqual(Array(3).fill({ dcId: 2, authKeyId: keyId, connectionId }));
  const asked = seen[5]!.request;
  expect(asked).toBeInstanceOf(Api.help.GetCountriesList); // not InvokeWithLayer / InitConnection
  expect(asked).toMatchObject({ langCode: 'nl', hash: 4242 });
  expect(wire.openConnections(keyId)).toBe(1);
});

test('a server whose RSA key is not trusted: GramJS gives up after resPQ', async () => {
  const untrusted = await MtprotoWire.start({ dcIds: [2], handle });
  try {
    const client = newClient(sessionAt(2, untrusted));
    expect(await client.connect()).toBe(false);
    expect(untrusted.requests.map((r) => r.request.className)).toEqual(['ReqPqMulti']);
  } finally {
    await untrusted.close();
  }
});

test('RpcFailure is the rpc_error GramJS turns into its errors: FLOOD_WAIT_30 a FloodWaitError of 30 s, CHAT_WRITE_FORBIDDEN an RPCError 400', async () => {
  const { client } = await minted();
  const flood = await client.invoke(countries('flood', 1)).catch((e: unknown) => e);
  expect(flood).toBeInstanceOf(errors.FloodWaitError);
  expect(flood).toMatchObject({ seconds: 30, code: 420 });

  const forbidden = await client.invoke(countries('forbidden', 1)).catch((e: unknown) => e);
  expect(forbidden).toBeInstanceOf(errors.RPCError);
  expect(forbidden).not.toBeInstanceOf(errors.FloodError);
  expect(forbidden).toMatchObject({ code: 400, errorMessage: 'CHAT_WRITE_FORBIDDEN' });
});

test('a minted session connects without a key exchange, and its requests carry its auth key id', async () => {
  const from = wire.requests.length;
  const { authKeyId, client } = await minted();
  expect(keyOf(client)).toBe(authKeyId);
  await client.invoke(new Api.help.GetNearestDc());
  const seen = since(from);
  expect(seen.map((r) => r.request.className)).toEqual(['help.GetConfig', 'help.GetNearestDc']);
  expect(seen.map((r) => r.ctx.authKeyId)).toEqual([authKeyId, authKeyId]);
  expect(wire.acceptedConnections(authKeyId)).toBe(1);
  // GramJS starts with salt 0 and takes the server's from new_session_created
  const state = (client as unknown as { _sender: { _state: { salt: { isZero(): boolean } } } })._sender._state;
  expect(state.salt.isZero()).toBe(false);
});

test('push: an UpdateShortMessage reaches a handler added with addEventHandler', async () => {
  const { authKeyId, client } = await minted();
  const got = new Promise<Api.UpdateShortMessage>((resolve) => {
    client.addEventHandler((update: unknown) => {
      if (update instanceof Api.UpdateShortMessage) resolve(update);
    });
  });
  const date = Math.floor(Date.now() / 1000);
  wire.push(authKeyId, new Api.UpdateShortMessage({ id: 41, userId: helpers.returnBigInt(99), message: 'from the wire', pts: 1, ptsCount: 1, date }));
  const update = await got;
  expect(update).toMatchObject({ id: 41, message: 'from the wire', date });
  expect(update.userId.toString()).toBe('99');
});

test("a DC switch reads help.getConfig, connects to the other DC's address and makes a new key there", async () => {
  const client = await connected(sessionAt(2));
  const authKeyId = keyOf(client);
  const from = wire.requests.length;
  await (client as unknown as { _switchDC(dcId: number): Promise<boolean> })._switchDC(4);
  expect(client.session.dcId).toBe(4);
  expect(client.session.serverAddress).toBe(wire.ipOf(4));
  const newKey = keyOf(client);
  expect(newKey).not.toBe(authKeyId);
  expect(wire.dcOfKey(newKey)).toBe(4);
  const seen = since(from).map((r) => `${r.ctx.dcId} ${r.request.className}`);
  expect(seen).toEqual(['2 help.GetConfig', '4 ReqPqMulti', '4 ReqDHParams', '4 SetClientDHParams', '4 help.GetConfig']);
  expect(await client.invoke(new Api.help.GetNearestDc())).toMatchObject({ thisDc: 4 });
  expect(wire.openConnections(authKeyId)).toBe(0);
  expect(wire.openConnections(newKey)).toBe(1);
});

test("a DC switch of a session loaded from a string takes the old DC's key along (StringSession.load restores it): the new DC answers -404", async () => {
  const { authKeyId, client } = await minted(2);
  const logged = captureLog(client);
  const from = wire.requests.length;
  let switched = false;
  void (client as unknown as { _switchDC(dcId: number): Promise<boolean> })._switchDC(4).finally(() => (switched = true));
  await eventually('GramJS to call the key broken on DC 4', async () => logged.includes('warn Broken authorization key for dc 4, resetting...'), 5_000, 20);
  expect(since(from).map((r) => `${r.ctx.dcId} ${r.request.className}`)).toEqual(['2 help.GetConfig']); // no key exchange on DC 4
  expect(keyOf(client)).toBe(authKeyId);
  expect(client.session.dcId).toBe(4);
  expect(switched).toBe(false);
});

test("'hang' leaves that request pending while later ones are answered; stall leaves even pings unanswered until it ends", async () => {
  const { authKeyId, client } = await minted();
  let hungSettled = false;
  void client.invoke(countries('hang', 1)).then(
    () => (hungSettled = true),
    () => (hungSettled = true),
  );
  expect(await client.invoke(countries('nl', 2))).toMatchObject({ hash: 2 });
  expect(wire.requests.some((r) => r.ctx.authKeyId === authKeyId && (r.request as Api.help.GetCountriesList).langCode === 'hang')).toBe(true);
  await sleep(200);
  expect(hungSettled).toBe(false);

  wire.stall(authKeyId);
  const from = wire.requests.length;
  let pongs = 0;
  void client.invoke(new Api.Ping({ pingId: helpers.returnBigInt(7) })).then(() => pongs++);
  void client.invoke(new Api.help.GetNearestDc()).then(() => pongs++);
  await sleep(300);
  expect(pongs).toBe(0);
  expect(since(from)).toEqual([]); // read, not taken
  expect(wire.openConnections(authKeyId)).toBe(1);

  wire.stall(authKeyId, false);
  const pong = await client.invoke(new Api.Ping({ pingId: helpers.returnBigInt(8) }));
  expect(pong).toBeInstanceOf(Api.Pong);
  expect(pong.pingId.toString()).toBe('8');
  expect(pongs).toBe(0); // what was sent during the stall stays unanswered (GramJS does not resend on its own)
  expect(hungSettled).toBe(false);
});

test("'drop' closes the connection: GramJS reconnects by itself, sends the request again, and the next request is answered", async () => {
  const { authKeyId, client } = await minted();
  const from = wire.requests.length;
  const list = await client.invoke(countries('drop-once', 3));
  expect(list).toMatchObject({ hash: 3 });
  const asked = since(from).filter((r) => r.request instanceof Api.help.GetCountriesList);
  expect(asked).toHaveLength(2); // the lost answer's request arrives a second time, on a new connection
  expect(asked[0]!.ctx.connectionId).not.toBe(asked[1]!.ctx.connectionId);
  expect(wire.acceptedConnections(authKeyId)).toBe(2);
  expect(wire.openConnections(authKeyId)).toBe(1);
  expect(await client.invoke(new Api.help.GetNearestDc())).toMatchObject({ country: 'NL' });
});

test('an auth key the server does not know gets -404: GramJS calls the key broken but keeps it, neither reconnects nor makes a new key, and connect() never ends', async () => {
  const other = await MtprotoWire.start({ dcIds: [2], handle });
  try {
    const { authKeyId, key } = await other.mintAuthKey(2);
    const session = new StringSession(await other.sessionString(2, key));
    session.setDC(2, wire.ipOf(2), 80); // the key of another server
    const client = newClient(session);
    const logged = captureLog(client);
    const from = wire.requests.length;
    let connectEnded = false;
    void client.connect().then(
      () => (connectEnded = true),
      () => (connectEnded = true),
    );
    await eventually('GramJS to call the key broken', async () => logged.includes('warn Broken authorization key for dc 2, resetting...'), 5_000, 20);
    await sleep(1_500); // GramJS waits 1 s before a reconnect
    expect(connectEnded).toBe(false);
    expect(wire.dcOfKey(authKeyId)).toBeNull();
    expect(wire.acceptedConnections(authKeyId)).toBe(1);
    expect(wire.openConnections(authKeyId)).toBe(1);
    expect(since(from)).toEqual([]);
    expect(keyOf(client)).toBe(authKeyId);
  } finally {
    await other.close();
  }
});
