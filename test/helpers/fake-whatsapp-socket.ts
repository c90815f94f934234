import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Clock } from '@metronome/core';
import type { WhatsAppSocket, WhatsAppSocketConfig, WhatsAppSocketEvents, WhatsAppSocketFactory } from '@metronome/transports';
import { FakeWhatsAppAnswers } from './fake-whatsapp-answers.js';
import { FakeWhatsAppGroups } from './fake-whatsapp-groups.js';
import { fakeLidMapping, FakeWhatsAppLids } from './fake-whatsapp-lids.js';
import { fakeBoom, type FakeFault, type FakeMessage, type FakeUpload } from './fake-whatsapp-shapes.js';
import { Browsers, buildPairingQRData, bytesToCrockford, DisconnectReason, jidEncode, type AnyMessageContent, type GroupMetadata, type proto, type WAMessage } from '@whiskeysockets/baileys';

/**
 * A FAKE WhatsApp: no network, no WhatsApp server. It stands where Baileys' socket would
 * (`makeWASocket`), speaks the same object API and answers as WhatsApp does — QR payloads
 * built from the socket's own credentials, pair-success followed by "restart required", group
 * lookups through `cachedGroupMetadata`, errors shaped like Baileys' (Boom, codes in `data` or
 * `output.statusCode`), a second connection of one device replacing the first, the groups
 * each account is in and their notifications (fake-whatsapp-groups.ts) — and records what
 * reached it, with fault switches for tests.
 */

export { fakeBoom, type FakeFault, type FakeMessage, type FakeUpload } from './fake-whatsapp-shapes.js';

export class FakeWhatsAppNetwork {
  readonly messages: FakeMessage[] = [];
  readonly uploads: FakeUpload[] = [];
  /** every presence update an account sent to a chat (typing: `composing`), with the fake clock's time */
  readonly presences: { accountId: string; jid: string; presence: string; at: number }[] = [];
  readonly groupLookups: { accountId: string; jid: string }[] = [];
  readonly sockets: FakeWhatsAppSocket[] = [];
  /** retry receipts: a recipient's device could not decrypt a message and asked for it again */
  readonly retries: { accountId: string; messageId: string; resent: proto.IMessage | null }[] = [];
  /** every time a device connected while another connection of it was open (the server replaced one) */
  readonly replacements: { accountId: string; at: number }[] = [];
  readonly groups = new Map<string, GroupMetadata>();
  /** the LID of each user the server knows (fake-whatsapp-lids.ts) */
  readonly lids = new FakeWhatsAppLids();
  /** groups with the fake's accounts as members, listed by `groupFetchAllParticipating` and changed by their notifications */
  readonly groupBook = new FakeWhatsAppGroups((accountId) => this.openByAccount.get(accountId), () => this.clock.now());
  /** every `groupFetchAllParticipating` the server answered or refused */
  readonly groupFetches: { accountId: string; at: number }[] = [];
  /** every connection opening and closing, in order */
  readonly timeline: { accountId: string; socketId: number; event: 'open' | 'close' }[] = [];
  /** devices the phone logged out: they cannot connect again until paired anew */
  readonly loggedOut = new Set<string>();
  private readonly faults = new Map<string, FakeFault[]>();
  private readonly gates = new Map<string, Promise<void>>();
  private readonly everOpen = new Set<FakeWhatsAppSocket>();
  private readonly overlimit = new Map<string, number>();
  private readonly openByAccount = new Map<string, FakeWhatsAppSocket>();
  /** messages written to an account while none of its sockets was open, delivered on its next connection */
  private readonly heldIncoming = new Map<string, WAMessage[]>();
  private nextSocketId = 1;
  /** late and refusing answers: ERROR acks after the write, reachout time locks, 405 on connect, slow lookups (fake-whatsapp-answers.ts) */
  readonly answers: FakeWhatsAppAnswers;

  constructor(readonly clock: Clock) {
    this.answers = new FakeWhatsAppAnswers(clock);
  }

  /** The factory to hand to the socket pool in place of `makeWASocket`. */
  readonly factory: WhatsAppSocketFactory = (accountId, config) => {
    const socket = new FakeWhatsAppSocket(this, accountId, this.nextSocketId++, config);
    this.sockets.push(socket);
    return socket;
  };

  /** A group the fake server knows, with its participants. */
  addGroup(jid: string, participants: string[]): void {
    this.groups.set(jid, { id: jid, subject: jid, owner: undefined, participants: participants.map((id) => ({ id })) });
  }

  /** The next sends or lookups of the account fail this way (each fault once). */
  failNext(accountId: string, ...faults: FakeFault[]): void {
    this.faults.set(accountId, [...(this.faults.get(accountId) ?? []), ...faults]);
  }

  /** The account's next fault, consumed only when `applies` to where it would strike. */
  /** Every lookup and send of the account is refused with `rate-overlimit` until `until` (fake clock, ms). */
  overlimitUntil(accountId: string, until: number): void {
    this.overlimit.set(accountId, until);
  }

  isOverlimit(accountId: string): boolean {
    return (this.overlimit.get(accountId) ?? 0) > this.clock.now();
  }

  takeFault(accountId: string, applies: (fault: FakeFault) => boolean): FakeFault | undefined {
    if (this.isOverlimit(accountId)) return 'rate-overlimit';
    const queue = this.faults.get(accountId);
    if (!queue?.length || !applies(queue[0]!)) return undefined;
    return queue.shift();
  }

  /** The socket of the account that is open now, if any. */
  openSocket(accountId: string): FakeWhatsAppSocket | undefined {
    return this.openByAccount.get(accountId);
  }

  opened(socket: FakeWhatsAppSocket): void {
    this.everOpen.add(socket);
    this.timeline.push({ accountId: socket.accountId, socketId: socket.id, event: 'open' });
    const older = this.openByAccount.get(socket.accountId);
    this.openByAccount.set(socket.accountId, socket);
    if (older && older !== socket && !older.closed) {
      // What WhatsApp does when a device connects twice: the older connection is closed.
      this.replacements.push({ accountId: socket.accountId, at: this.clock.now() });
      older.drop(fakeBoom('Stream Errored (conflict)', { statusCode: DisconnectReason.connectionReplaced }));
    }
  }

  closed(socket: FakeWhatsAppSocket): void {
    if (this.everOpen.delete(socket)) this.timeline.push({ accountId: socket.accountId, socketId: socket.id, event: 'close' });
    if (this.openByAccount.get(socket.accountId) === socket) this.openByAccount.delete(socket.accountId);
  }

  /**
   * The operator scans the QR (or types the code) on the phone: the server sends pair-success
   * to the account's pairing socket, which stores its new identity, then asks it to restart.
   */
  completePairing(accountId: string, phoneNumber = '60123456789'): void {
    const socket = [...this.sockets].reverse().find((s) => s.accountId === accountId && s.offeredQr && !s.closed);
    if (!socket) throw new Error(`no pairing socket of ${accountId} is waiting`);
    socket.pairSuccess(phoneNumber);
  }

  /** The most connections of the account that were ever open at once (the server allows one). */
  maxOpenAtOnce(accountId: string): number {
    let open = 0;
    let max = 0;
    for (const e of this.timeline) {
      if (e.accountId !== accountId) continue;
      open += e.event === 'open' ? 1 : -1;
      max = Math.max(max, open);
    }
    return max;
  }

  /** Holds every send of the account after it reached the server, until the returned function is called. */
  holdSends(accountId: string): () => void {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.gates.set(accountId, gate);
    return () => {
      this.gates.delete(accountId);
      release();
    };
  }

  gate(accountId: string): Promise<void> | undefined {
    return this.gates.get(accountId);
  }

  /**
   * FAKE incoming message: a person (`from`, a JID) writes `text` to the account. As WhatsApp
   * does, an open socket gets it at once (`messages.upsert`, type `notify`); with none open, the
   * server holds it and delivers it after the account's next connection opens (type `append`,
   * Baileys' offline messages). `fromMe`: the account itself wrote it (from the phone);
   * `participant`: a member's message in the group `from`.
   */
  fakeIncomingMessage(accountId: string, m: { from: string; text: string; fromMe?: boolean; participant?: string; pushName?: string }): void {
    const message = {
      ...(m.pushName && { pushName: m.pushName }),
      key: { remoteJid: m.from, fromMe: m.fromMe ?? false, id: `FAKE${randomBytes(8).toString('hex').toUpperCase()}`, ...(m.participant && { participant: m.participant }) },
      message: { conversation: m.text },
      messageTimestamp: Math.floor(this.clock.now() / 1000),
    } as WAMessage;
    const open = this.openByAccount.get(accountId);
    if (open && !open.closed) open.receive([message], 'notify');
    else this.heldIncoming.set(accountId, [...(this.heldIncoming.get(accountId) ?? []), message]);
  }

  /** The messages held for an account while it had no open socket, handed over once. */
  takeHeldIncoming(accountId: string): WAMessage[] {
    const held = this.heldIncoming.get(accountId) ?? [];
    this.heldIncoming.delete(accountId);
    return held;
  }

  /** Messages that reached the fake server for one chat, in arrival order. */
  messagesTo(jid: string): FakeMessage[] {
    return this.messages.filter((m) => m.jid === jid);
  }
}

export class FakeWhatsAppSocket implements WhatsAppSocket {
  readonly ev: WhatsAppSocket['ev'];
  readonly signalRepository: { lidMapping: ReturnType<typeof fakeLidMapping> };
  closed = false;
  offeredQr = false;
  private readonly emitter = new EventEmitter();

  constructor(
    private readonly network: FakeWhatsAppNetwork,
    readonly accountId: string,
    readonly id: number,
    private readonly config: WhatsAppSocketConfig,
  ) {
    this.emitter.setMaxListeners(100);
    this.signalRepository = { lidMapping: fakeLidMapping(() => this.config.auth.keys, network.lids) };
    this.ev = {
      on: (event, listener) => void this.emitter.on(event, listener as (arg: unknown) => void),
      off: (event, listener) => void this.emitter.off(event, listener as (arg: unknown) => void),
    };
    // As Baileys does: every credentials update is applied to the auth state it was given.
    this.ev.on('creds.update', (update) => Object.assign(this.config.auth.creds, update));
    setImmediate(() => void this.connect());
  }

  private emit<E extends keyof WhatsAppSocketEvents>(event: E, arg: WhatsAppSocketEvents[E]): void {
    this.emitter.emit(event, arg);
  }

  /** As Baileys' `sock.user`: the device's `creds.me` (its LID once connected). */
  get user(): { id: string; lid?: string } | undefined {
    return this.creds.me ?? undefined;
  }

  /** A notification from the server, as the event Baileys makes of it (the group book sends these). */
  serverEvent<E extends keyof WhatsAppSocketEvents>(event: E, arg: WhatsAppSocketEvents[E]): void {
    if (!this.closed) this.emit(event, arg);
  }

  private get creds() {
    return this.config.auth.creds;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    this.emit('connection.update', { connection: 'connecting' });
    const paired = Boolean(this.creds.me?.id && this.creds.account);
    if (!paired) {
      // The server offers pairing refs; the QR payload carries this device's public keys.
      this.offeredQr = true;
      const qr = buildPairingQRData(
        `2@${randomBytes(16).toString('base64')}`,
        Buffer.from(this.creds.noiseKey.public).toString('base64'),
        Buffer.from(this.creds.signedIdentityKey.public).toString('base64'),
        this.creds.advSecretKey,
        Browsers.ubuntu('Metronome'),
      );
      this.emit('connection.update', { qr });
      return;
    }
    if (this.network.loggedOut.has(this.accountId)) {
      this.drop(fakeBoom('Connection Failure', { statusCode: DisconnectReason.loggedOut, data: { reason: '401' } }));
      return;
    }
    const refused = this.network.answers.onConnect(this.accountId);
    if (refused) {
      this.drop(refused);
      return;
    }
    this.network.opened(this);
    // Baileys stores the device list of its own user on login, through the key store.
    await this.config.auth.keys.set({ 'device-list': { [this.creds.me!.id.split(/[:@]/)[0]!]: ['0'] } });
    this.emit('creds.update', { me: { ...this.creds.me!, lid: `${this.id}99@lid` } });
    this.emit('connection.update', { connection: 'open' });
    // As Baileys: what the server held while the device was offline follows the opening.
    const held = this.network.takeHeldIncoming(this.accountId);
    if (held.length > 0) this.receive(held, 'append');
  }

  /** The server delivers messages written to the account. */
  receive(messages: WAMessage[], type: 'notify' | 'append'): void {
    this.emit('messages.upsert', { messages, type });
  }

  pairSuccess(phoneNumber: string): void {
    this.emit('creds.update', {
      me: { id: jidEncode(phoneNumber, 's.whatsapp.net', 7), name: 'Operator' },
      account: { details: randomBytes(32), accountSignatureKey: randomBytes(32), accountSignature: randomBytes(64), deviceSignature: randomBytes(64) },
      platform: 'android',
    });
    this.emit('connection.update', { isNewLogin: true, qr: undefined });
    this.network.loggedOut.delete(this.accountId);
    this.drop(fakeBoom('Stream Errored (restart required)', { statusCode: DisconnectReason.restartRequired }));
  }

  /** The server closed the connection with `error`. */
  drop(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.network.closed(this);
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date(this.network.clock.now()) } });
  }

  private assertOpen(): void {
    if (this.closed || this.network.openSocket(this.accountId) !== this) throw fakeBoom('Connection Closed', { statusCode: DisconnectReason.connectionClosed });
  }

  /** Applies the next fault switched on for this account, if any, before the server answers. */
  private fault(phase: 'lookup' | 'send'): 'hang' | undefined {
    // A missing acknowledgement strikes a message, not a group lookup.
    const fault = this.network.takeFault(this.accountId, (f) => phase === 'send' || f !== 'timeout-after-handover');
    if (!fault) return undefined;
    switch (fault) {
      case 'rate-overlimit':
        throw fakeBoom('rate-overlimit', { data: 429 });
      case 'logged-out': {
        const error = fakeBoom('Connection Failure', { statusCode: DisconnectReason.loggedOut, data: { reason: '401' } });
        this.network.loggedOut.add(this.accountId);
        this.drop(error);
        throw error;
      }
      case 'connection-closed':
        this.drop(fakeBoom('Connection Closed', { statusCode: DisconnectReason.connectionClosed }));
        throw fakeBoom('Connection Closed', { statusCode: DisconnectReason.connectionClosed });
      case 'timeout-after-handover':
        return 'hang';
    }
  }

  async groupMetadata(jid: string): Promise<GroupMetadata> {
    this.assertOpen();
    this.network.groupLookups.push({ accountId: this.accountId, jid });
    this.fault('lookup');
    await this.network.answers.beforeLookup(this.accountId, this.config.defaultQueryTimeoutMs);
    if (this.network.groupBook.has(jid)) {
      // As WhatsApp: a group the account is not (or no longer) in is refused.
      if (!this.network.groupBook.isMember(this.accountId, jid)) throw fakeBoom('forbidden', { data: 403 });
      return this.network.groupBook.metadata(jid);
    }
    const group = this.network.groups.get(jid);
    if (!group) throw fakeBoom('item-not-found', { data: 404 });
    return structuredClone(group);
  }

  /**
   * As Baileys (Socket/groups.js): ONE query answered with every group the account is in; the
   * socket emits them all as `groups.update` before it returns them, keyed by id.
   */
  groupFetchAllParticipating: WhatsAppSocket['groupFetchAllParticipating'] = async () => {
    this.assertOpen();
    this.network.groupFetches.push({ accountId: this.accountId, at: this.network.clock.now() });
    this.fault('lookup');
    if (this.network.groupBook.takeListingRefusal(this.accountId)) throw fakeBoom('rate-overlimit', { data: 429 });
    const data = this.network.groupBook.listFor(this.accountId);
    this.emit('groups.update', Object.values(data));
    return data;
  };

  sendMessage: WhatsAppSocket['sendMessage'] = async (jid, content, options) => {
    const text = (content as Extract<AnyMessageContent, { text: string }>).text;
    await this.deliver(jid, { text }, options?.messageId);
    const sent = { key: { remoteJid: jid, fromMe: true, id: options?.messageId ?? null }, message: { conversation: text } } as WAMessage;
    // As Baileys (emitOwnEvents, on by default): the sent message comes back as `messages.upsert` `append`.
    process.nextTick(() => this.serverEvent('messages.upsert', { messages: [sent], type: 'append' }));
    return sent;
  };

  sendPresenceUpdate: WhatsAppSocket['sendPresenceUpdate'] = async (presence, jid) => {
    this.assertOpen();
    // As WhatsApp: a presence is a frame the server takes without an answer.
    this.network.presences.push({ accountId: this.accountId, jid: jid ?? '', presence, at: this.network.clock.now() });
  };

  relayMessage: WhatsAppSocket['relayMessage'] = async (jid, message, options) => {
    await this.deliver(jid, message, options.messageId);
    return options.messageId!;
  };

  private async deliver(jid: string, content: FakeMessage['content'], messageId: string | undefined): Promise<void> {
    this.assertOpen();
    if (!messageId) throw new Error('the fake network expects every message to carry its id');
    // As Baileys' relayMessage: a group message needs the group's participants first.
    if (jid.endsWith('@g.us')) (await this.config.cachedGroupMetadata(jid)) ?? (await this.groupMetadata(jid));
    const hang = this.fault('send');
    // As Baileys: the device lookup before the write stores the user's LID pair.
    await this.signalRepository.lidMapping.learn(jid);
    this.assertOpen();
    // As Baileys' relayMessage, right before its sendNode: the line the transport reads as the write.
    this.config.logger.debug({ msgId: messageId }, 'sending message to 1 devices');
    this.network.messages.push({ accountId: this.accountId, socketId: this.id, jid, messageId, content, at: this.network.clock.now() });
    // The server may refuse it later, as an ERROR ack (Baileys' handleBadAck).
    const refusal = this.network.answers.afterWrite(this.accountId, jid, messageId);
    if (refusal) setImmediate(() => this.serverEvent('messages.update', refusal));
    // The server has the message, but its acknowledgement never comes back.
    if (hang) await new Promise(() => undefined);
    await this.network.gate(this.accountId);
  }

  /**
   * A recipient's device asks for a message again (a retry receipt). As Baileys does, the socket
   * asks its `getMessage` for the message and sends it again under the same id, or cannot.
   */
  async retryReceipt(jid: string, messageId: string): Promise<boolean> {
    this.assertOpen();
    const message = await this.config.getMessage({ remoteJid: jid, fromMe: true, id: messageId });
    // the same id again: the recipient's device shows it once, in place of the placeholder
    this.network.retries.push({ accountId: this.accountId, messageId, resent: message ?? null });
    return message !== undefined;
  }

  requestPairingCode: WhatsAppSocket['requestPairingCode'] = async (phoneNumber) => {
    const code = bytesToCrockford(randomBytes(5));
    // As Baileys: the number becomes the device's `me` before the phone confirms.
    this.emit('creds.update', { pairingCode: code, me: { id: jidEncode(phoneNumber, 's.whatsapp.net'), name: '~' } });
    return code;
  };

  waUploadToServer: WhatsAppSocket['waUploadToServer'] = async (encFilePath, opts) => {
    this.assertOpen();
    const size = (await stat(encFilePath)).size;
    this.network.uploads.push({ accountId: this.accountId, mediaType: opts.mediaType, fileEncSha256B64: opts.fileEncSha256B64, bytes: size, at: this.network.clock.now() });
    const path = `/v/t62.7118-24/${Buffer.from(opts.fileEncSha256B64, 'base64').toString('hex').slice(0, 24)}.enc`;
    return { mediaUrl: `https://mmg.fake-whatsapp.invalid${path}`, directPath: path };
  };

  async end(error: Error | undefined): Promise<void> {
    this.drop(error ?? fakeBoom('Connection Closed', { statusCode: DisconnectReason.connectionClosed }));
  }

  async logout(): Promise<void> {
    this.network.loggedOut.add(this.accountId);
    this.drop(fakeBoom('Intentional Logout', { statusCode: DisconnectReason.loggedOut }));
  }
}
