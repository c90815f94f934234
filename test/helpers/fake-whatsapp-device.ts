import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { WhatsAppSocket, WhatsAppSocketConfig, WhatsAppSocketEvents } from '@metronome/transports/whatsapp';
import { fakeLidMapping } from './fake-whatsapp-lids.js';
import { fakeBoom, type FakeMessage } from './fake-whatsapp-shapes.js';
import type { FakeWhatsAppNetwork } from './fake-whatsapp-socket.js';
import {
  Browsers,
  buildPairingQRData,
  bytesToCrockford,
  DisconnectReason,
  jidEncode,
  WAMessageStatus,
  type AnyMessageContent,
  type GroupMetadata,
  type WAMessage,
} from '@whiskeysockets/baileys';

// One FAKE WhatsApp connection of a device (the network is in fake-whatsapp-socket.ts).

export class FakeWhatsAppSocket implements WhatsAppSocket {
  readonly ev: WhatsAppSocket['ev'];
  /** Baileys' frame dispatch: this fake sends no retry receipts (the wire tests do) */
  readonly ws = new EventEmitter();
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
    const refusal = await this.deliver(jid, { text }, options?.messageId);
    const sent = {
      key: { remoteJid: jid, fromMe: true, id: options?.messageId ?? null },
      message: { conversation: text },
      status: WAMessageStatus.PENDING,
    } as WAMessage;
    // As Baileys (emitOwnEvents, on by default): the sent message comes back as `messages.upsert` `append`;
    // an ERROR ack that came while Baileys buffered that upsert's events is folded into it.
    const folded = refusal?.atOnce ? refusal.updates[0]!.update : null;
    process.nextTick(() => this.serverEvent('messages.upsert', { messages: [{ ...sent, ...folded }], type: 'append' }));
    if (refusal && !folded) setImmediate(() => this.serverEvent('messages.update', refusal.updates));
    return sent;
  };

  // The lock as the answers keep it (none is capped here): as Baileys (Socket/socket.js), also told
  // as a connection.update; test/platforms/whatsapp-fake-pins.test.ts holds both to the real socket.
  fetchAccountReachoutTimelock: WhatsAppSocket['fetchAccountReachoutTimelock'] = async () => {
    this.assertOpen();
    const lock = this.network.answers.reachoutLockOf(this.accountId) as Awaited<ReturnType<WhatsAppSocket['fetchAccountReachoutTimelock']>>;
    process.nextTick(() => this.serverEvent('connection.update', { reachoutTimeLock: lock }));
    return lock;
  };
  fetchNewChatMessageCap: WhatsAppSocket['fetchNewChatMessageCap'] = async () => {
    this.assertOpen();
    return { capping_status: 'NONE' } as Awaited<ReturnType<WhatsAppSocket['fetchNewChatMessageCap']>>;
  };

  sendPresenceUpdate: WhatsAppSocket['sendPresenceUpdate'] = async (presence, jid) => {
    this.assertOpen();
    // As WhatsApp: a presence is a frame the server takes without an answer.
    this.network.presences.push({ accountId: this.accountId, jid: jid ?? '', presence, at: this.network.clock.now() });
  };

  relayMessage: WhatsAppSocket['relayMessage'] = async (jid, message, options) => {
    // no upsert of its own to fold an ERROR ack into: it comes as an update
    const refusal = await this.deliver(jid, message, options.messageId);
    if (refusal) setImmediate(() => this.serverEvent('messages.update', refusal.updates));
    return options.messageId!;
  };

  private async deliver(
    jid: string,
    content: FakeMessage['content'],
    messageId: string | undefined,
  ): Promise<ReturnType<FakeWhatsAppNetwork['answers']['afterWrite']>> {
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
    // The server may refuse it later, as an ERROR ack (Baileys' handleBadAck): the caller tells it.
    const refusal = this.network.answers.afterWrite(this.accountId, jid, messageId);
    // The server has the message, but its acknowledgement never comes back.
    if (hang) await new Promise(() => undefined);
    await this.network.gate(this.accountId);
    return refusal;
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
    this.network.uploads.push({
      accountId: this.accountId,
      mediaType: opts.mediaType,
      fileEncSha256B64: opts.fileEncSha256B64,
      bytes: size,
      at: this.network.clock.now(),
    });
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
