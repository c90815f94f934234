// A FAKE of Telegram for user accounts, on the wire: the REAL GramJS client (TelegramClient)
// connects to it over MTProto (wire-telegram-mtproto.ts: TCP, the key exchange, encryption) and
// it answers Telegram's API methods as Telegram does — the sign-in (code, two-step password by
// SRP, QR login across data centres: wire-telegram-accounts.ts), users, groups, channels, access
// hashes and dialogs (wire-telegram-peers.ts), sends, uploads and their refusals
// (wire-telegram-messages.ts) — keeping a record tests read: what Telegram took, by which auth
// key and connection. Its knobs are what Telegram does to an account or a chat: FLOOD_WAIT,
// SLOWMODE_WAIT, PEER_FLOOD, a chat's refusal, a spam-limited / frozen / restricted account, a
// block, a revoked session, an answer lost or never given.
import { Api, extensions } from 'telegram';
import { StringSession } from 'telegram/sessions/index.js';
import { type AccountState, Accounts, type AddUserOptions, authKeyIdOfKey } from './wire-telegram-accounts.js';
import { privateMessageUpdates, type WireIncoming } from './wire-telegram-incoming.js';
import { type ChatRefusal, Sends, type WireTyping, type WireUpload, type WireUserMessage } from './wire-telegram-messages.js';
import { MtprotoWire, type RpcAnswer, type RpcContext, RpcFailure } from './wire-telegram-mtproto.js';
import { type DialogSpec, Peers } from './wire-telegram-peers.js';

export type { AccountState, AddUserOptions, ChatRefusal, DialogSpec, WireIncoming, WireTyping, WireUpload, WireUserMessage };

export class WireTelegram {
  private wireOrNull: MtprotoWire | null = null;
  private readonly peers: Peers;
  private readonly accounts: Accounts;
  private readonly sends: Sends;
  /** requests of methods the fake does not answer (refused INPUT_METHOD_INVALID), by class name */
  readonly unanswered: string[] = [];

  constructor(
    private readonly now: () => number = Date.now,
    /** how long a taken send waits before its answer, ms: meanwhile a repeat of its random_id is refused RANDOM_ID_DUPLICATE */
    answerDelayMs = 0,
  ) {
    this.peers = new Peers(now);
    this.accounts = new Accounts(now, this.peers, (authKeyId) =>
      this.wireOrNull?.push(authKeyId, new Api.UpdateShort({ update: new Api.UpdateLoginToken(), date: Math.floor(this.now() / 1000) })),
    );
    this.sends = new Sends(now, answerDelayMs, this.peers);
  }

  /** Listens: data centres 2 and 4, each on port 80 of a loopback address of its own. */
  async start(): Promise<void> {
    this.wireOrNull = await MtprotoWire.start({ dcIds: [2, 4], handle: (ctx, request) => this.handle(ctx, request) });
  }

  async close(): Promise<void> {
    await this.wireOrNull?.close();
  }

  get wire(): MtprotoWire {
    if (!this.wireOrNull) throw new Error('WireTelegram is not started');
    return this.wireOrNull;
  }

  /** the server's RSA public key (PEM), for trustTelegramServerKey */
  get serverKeyPem(): string {
    return this.wire.serverKeyPem;
  }

  /** where a new sign-in starts (TELEGRAM_USER_DC): data centre 2 */
  dc(): { dcId: 2; ip: string } {
    return { dcId: 2, ip: this.wire.ipOf(2) };
  }

  /** The request handler the wire calls (exposed so a test can call it with GramJS `Api` requests directly). */
  async handle(ctx: RpcContext, request: Api.AnyRequest | object): Promise<RpcAnswer> {
    this.accounts.gate(ctx);
    const signIn = this.accounts.answer(ctx, request);
    if (signIn) return signIn;
    const account = this.accounts.accountOf(ctx);
    const answer = this.peers.answer(account.id, request) ?? (await this.sends.answer(ctx, account, request));
    if (answer) return answer;
    this.unanswered.push((request as { className?: string }).className ?? 'unknown');
    throw new RpcFailure(400, 'INPUT_METHOD_INVALID');
  }

  /** handle(), the answer read back from its TL bytes by the request's readResult, as GramJS reads it ('hang' and 'drop' as they are) */
  async ask(ctx: RpcContext, request: object): Promise<unknown> {
    const answer = await this.handle(ctx, request);
    if (answer === 'hang' || answer === 'drop') return answer;
    return (request as { readResult(reader: extensions.BinaryReader): unknown }).readResult(new extensions.BinaryReader(Buffer.from(answer.getBytes())));
  }

  // --- accounts ---

  /** A Telegram account with this phone number (on DC 2 unless `dcId`); `password`: two-step verification. Its user id. */
  addUser(phone: string, opts: AddUserOptions = {}): string {
    return `${this.accounts.add(phone, opts).id}`;
  }

  /** A session already signed in as the account of `phone` (as a finished sign-in leaves): a GramJS StringSession string of a minted auth key on its DC. */
  async signedInSession(phone: string): Promise<string> {
    const account = this.accounts.byPhoneNumber(phone);
    if (!account) throw new Error(`no account has the phone ${phone}`);
    const { authKeyId, key } = await this.wire.mintAuthKey(account.dcId);
    this.accounts.bind(authKeyId, account.id);
    return this.wire.sessionString(account.dcId, key);
  }

  /** The auth key id of a GramJS session string (as the record's authKeyId names it). */
  keyOf(session: string): string {
    const key = new StringSession(session)._key;
    if (!key) throw new Error('the session has no auth key');
    return authKeyIdOfKey(key);
  }

  /** The user the session is signed in as; null: none, or revoked. */
  userOf(session: string): string | null {
    if (!new StringSession(session)._key) return null;
    const id = this.accounts.userOfKey(this.keyOf(session));
    return id === null ? null : `${id}`;
  }

  /** The code the phone's Telegram app shows for the last auth.sendCode. */
  codeOf(phone: string): string | null {
    return this.accounts.codeOf(phone);
  }

  codeValid(phone: string): boolean {
    return this.accounts.codeValid(phone);
  }

  expireCode(phone: string): void {
    this.accounts.expireCode(phone);
  }

  /** The session is ended on the phone (Settings → Devices): its key answers AUTH_KEY_UNREGISTERED. */
  revoke(session: string): void {
    this.accounts.revoke(this.keyOf(session));
  }

  /** The phone of `phone` scans the QR login code showing `token`. */
  scanQr(token: Buffer, phone: string): void {
    this.accounts.scanQr(token, phone);
  }

  /**
   * What Telegram did to the account: 'spam_limited' (USER_BANNED_IN_CHANNEL on group and
   * channel sends, PEER_FLOOD to users not in its contacts), 'frozen' (FROZEN_METHOD_INVALID on
   * sends), 'restricted' (USER_RESTRICTED on sends), 'duplicated' (AUTH_KEY_DUPLICATED on every
   * request of its keys); null: none.
   */
  restrict(userId: string, state: AccountState | null): void {
    this.accountOf(userId).state = state;
  }

  /** 'by_them': the peer blocked the account (USER_IS_BLOCKED); 'by_me': the account blocked the peer (YOU_BLOCKED_USER); null: unblocked. */
  block(userId: string, peerUserId: string, by: 'by_them' | 'by_me' | null): void {
    const key = `${userId}|${peerUserId}`;
    if (by) this.sends.blocks.set(key, by);
    else this.sends.blocks.delete(key);
  }

  // --- peers ---

  /** The account's dialogs, newest first (messages.getDialogs); each peer is known to the fake from now on. */
  setDialogs(userId: string, dialogs: DialogSpec[]): void {
    this.peers.setDialogs(this.accountOf(userId).id, dialogs);
  }

  /** The access hash the account is given for a user or a channel (marked chat id): what a send to it must carry. */
  accessHashOf(userId: string, chatId: string): string {
    return `${this.peers.accessHash(BigInt(userId), chatId)}`;
  }

  // --- sends ---

  /** FLOOD_WAIT_X (420) on the account's sends for `seconds`. */
  flood(userId: string, seconds: number): void {
    this.sends.floodUntil.set(BigInt(userId), this.now() + seconds * 1000);
  }

  /** FLOOD_WAIT_X (420) on the account's upload.saveFilePart / saveBigFilePart for `seconds`. */
  floodUploads(userId: string, seconds: number): void {
    this.sends.uploadFloodUntil.set(BigInt(userId), this.now() + seconds * 1000);
  }

  /** SLOWMODE_WAIT_X (420) on the account's sends to the chat for `seconds`. */
  slowMode(userId: string, chatId: string, seconds: number): void {
    this.sends.slowUntil.set(`${userId}|${chatId}`, this.now() + seconds * 1000);
  }

  /** The chat refuses the account's sends with this error (e.g. CHAT_WRITE_FORBIDDEN 403, USER_BANNED_IN_CHANNEL 400, TOPIC_CLOSED 400); `only` texts or media. */
  refuseChat(userId: string, chatId: string, message: string, code = 403, opts: { only?: 'text' | 'media' } = {}): void {
    this.sends.refusals.set(`${userId}|${chatId}`, { code, message, ...(opts.only && { only: opts.only }) });
  }

  /** PEER_FLOOD (400) on every send of the account. */
  peerFlood(userId: string): void {
    this.sends.peerFlooded.add(BigInt(userId));
  }

  /**
   * The next `count` sends of the account are taken (recorded) and their answers lost. 'drop': the
   * connection drops (GramJS sends the request again on a new one, answered with the first
   * message); 'hang': the answer never comes and the connection stays open (the sender's timeout
   * gives up: a send in doubt, settled by sending it again).
   */
  loseAnswers(userId: string, count: number, how: 'drop' | 'hang' = 'drop'): void {
    this.sends.dropAnswers.set(BigInt(userId), { left: count, how });
  }

  /** The account's sends are never answered and never taken (nothing recorded); `false` ends it. */
  hangSends(userId: string, on = true): void {
    if (on) this.sends.hung.add(BigInt(userId));
    else this.sends.hung.delete(BigInt(userId));
  }

  // --- what users write to an account ---

  /**
   * The user `fromUserId` writes `text` to the account `toUserId` in their private chat. Telegram sends it to the account's
   * session that called a method last: as `updateShortMessage` when the account knows the user (a dialog with it, or a
   * message sent to it), else as `updates` with `updateNewMessage` and the user; `form` forces one. It takes the next id and
   * pts of the account's box. None of its sessions listening: the record's connectionId is null (the fake keeps no difference).
   */
  writeToAccount(fromUserId: string, toUserId: string, text: string, o: { form?: 'short' | 'updates' } = {}): WireIncoming {
    const viewer = this.accountOf(toUserId).id;
    const from = BigInt(fromUserId);
    if (!this.peers.userExists(from)) throw new Error(`no user has the id ${fromUserId}`);
    const known = this.peers.membership(viewer, fromUserId) !== null || this.messagesOf(toUserId).some((m) => m.chatId === fromUserId);
    const form = o.form ?? (known ? 'short' : 'updates');
    const { id, pts } = this.sends.nextInBox(`${viewer}`);
    const at = this.now();
    const updates = privateMessageUpdates(this.peers, { viewer, from, text, id, pts, date: Math.floor(at / 1000), form });
    const connectionId = this.wire.pushUpdates(this.accounts.keysOf(viewer), updates);
    const record: WireIncoming = { id, pts, fromUserId, toUserId, text, form, connectionId, at };
    this.incoming.push(record);
    return record;
  }

  /** whether a message written to the account now reaches a session of it (one that called a method has a connection open) */
  listening(userId: string): boolean {
    return this.wire.updatesConnection(this.accounts.keysOf(this.accountOf(userId).id)) !== null;
  }

  // --- the record ---

  /** every message users wrote to accounts, in order */
  readonly incoming: WireIncoming[] = [];

  /** every message Telegram took, in order */
  get messages(): readonly WireUserMessage[] {
    return this.sends.messages;
  }

  messagesOf(userId: string): WireUserMessage[] {
    return this.sends.messages.filter((m) => m.userId === userId);
  }

  get typing(): readonly WireTyping[] {
    return this.sends.typing;
  }

  get uploads(): readonly WireUpload[] {
    return this.sends.uploads;
  }

  /** repeats of a random_id refused RANDOM_ID_DUPLICATE (500) while the first was being processed */
  get duplicatesRefused(): number {
    return this.sends.duplicatesRefused;
  }

  /** repeats of a random_id answered with the first message's Updates (nothing new taken) */
  get duplicatesAnswered(): number {
    return this.sends.duplicatesAnswered;
  }

  /** the auth key of each connection that sent a request after its key exchange, in order of its first */
  get connects(): string[] {
    const seen = new Map<number, string>();
    for (const { ctx } of this.wireOrNull?.requests ?? []) if (ctx.authKeyId !== '0' && !seen.has(ctx.connectionId)) seen.set(ctx.connectionId, ctx.authKeyId);
    return [...seen.values()];
  }

  private accountOf(userId: string) {
    const account = this.accounts.account(BigInt(userId));
    if (!account) throw new Error(`no account has the user id ${userId}`);
    return account;
  }
}
