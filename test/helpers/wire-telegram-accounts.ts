import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Api } from 'telegram';
import { type RpcContext, RpcFailure } from './wire-telegram-mtproto.js';
import { num, type Peers } from './wire-telegram-peers.js';
import { passwordAnswer, type SrpChallenge, srpChallenge, srpCheck, type SrpSecret, srpSecret } from './wire-telegram-srp.js';

// The FAKE Telegram's accounts (wire-telegram.ts): who signs in with which phone, on which data
// centre, with which two-step password (kept as an SRP verifier), and which auth key acts as
// whom. Answers the sign-in as Telegram does: auth.sendCode (PHONE_MIGRATE_X to the account's
// DC), auth.signIn, account.getPassword / auth.checkPassword (SRP, wire-telegram-srp.ts), the QR
// login (auth.exportLoginToken, auth.loginTokenMigrateTo, auth.importLoginToken) and auth.logOut.

/** What Telegram did to an account (restrict()): what its sends are answered. */
export type AccountState = 'spam_limited' | 'frozen' | 'duplicated' | 'restricted';

export interface Account {
  id: bigint;
  /** digits only, as Telegram keeps it */
  phone: string;
  dcId: number;
  password: SrpSecret | null;
  hint: string | null;
  banned: boolean;
  state: AccountState | null;
  /** the last account.getPassword's challenge (its srp_id the only one auth.checkPassword takes) */
  challenge: SrpChallenge | null;
}

export interface AddUserOptions {
  password?: string;
  hint?: string;
  banned?: boolean;
  /** the data centre the account lives on (2 unless said) */
  dcId?: number;
  username?: string;
  firstName?: string;
}

interface KeyState {
  userId: bigint | null;
  revoked: boolean;
  /** SESSION_PASSWORD_NEEDED was answered: this account's password is what auth.checkPassword checks */
  passwordFor: bigint | null;
}

interface QrToken {
  token: Buffer;
  authKeyId: string;
  expires: number;
  scannedBy: bigint | null;
  accepted: boolean;
}

const QR_SECONDS = 30;

/** The auth key id of a key, as the wire names it (GramJS's AuthKey.keyId: SHA-1's bytes 12..20, little-endian, unsigned). */
export function authKeyIdOfKey(key: Buffer): string {
  return createHash('sha1').update(key).digest().readBigUInt64LE(12).toString();
}

export const digits = (phone: string): string => phone.replace(/\D/g, '');

export class Accounts {
  private readonly byPhone = new Map<string, Account>();
  private readonly byId = new Map<bigint, Account>();
  private readonly keys = new Map<string, KeyState>();
  private readonly codes = new Map<string, { hash: string; code: string; expired: boolean }>();
  private readonly tokens = new Map<string, QrToken>();
  private nextUser = 5_000_000n + BigInt(randomInt(0, 1_000_000)) * 10n;

  constructor(
    private readonly now: () => number,
    private readonly peers: Peers,
    /** Telegram pushes updateLoginToken to the session that shows a QR code once it is scanned */
    private readonly scanned: (authKeyId: string) => void,
  ) {}

  add(phone: string, opts: AddUserOptions = {}): Account {
    const account: Account = {
      id: this.nextUser++,
      phone: digits(phone),
      dcId: opts.dcId ?? 2,
      password: opts.password === undefined ? null : srpSecret(opts.password),
      hint: opts.hint ?? null,
      banned: opts.banned ?? false,
      state: null,
      challenge: null,
    };
    this.byPhone.set(account.phone, account);
    this.byId.set(account.id, account);
    this.peers.addUser({ id: account.id, firstName: opts.firstName ?? `User ${account.phone.slice(-4)}`, username: opts.username, phone: account.phone });
    return account;
  }

  byPhoneNumber(phone: string): Account | null {
    return this.byPhone.get(digits(phone)) ?? null;
  }

  account(id: bigint): Account | null {
    return this.byId.get(id) ?? null;
  }

  bind(authKeyId: string, userId: bigint): void {
    this.keys.set(authKeyId, { userId, revoked: false, passwordFor: null });
  }

  revoke(authKeyId: string): void {
    const k = this.key(authKeyId);
    k.revoked = true;
  }

  /** the account the key is signed in as (null: none, or revoked) */
  /** the auth keys signed in as this user now (not revoked) */
  keysOf(userId: bigint): string[] {
    return [...this.keys].filter(([, k]) => k.userId === userId && !k.revoked).map(([id]) => id);
  }

  userOfKey(authKeyId: string): bigint | null {
    const k = this.keys.get(authKeyId);
    return k && !k.revoked ? k.userId : null;
  }

  codeOf(phone: string): string | null {
    return this.codes.get(digits(phone))?.code ?? null;
  }

  codeValid(phone: string): boolean {
    const c = this.codes.get(digits(phone));
    return c !== undefined && !c.expired;
  }

  expireCode(phone: string): void {
    const c = this.codes.get(digits(phone));
    if (c) c.expired = true;
  }

  /** The phone of `phone` scans the QR code showing `token` (it must not have expired): its session is told (updateLoginToken). */
  scanQr(token: Buffer, phone: string): void {
    const t = this.tokens.get(token.toString('hex'));
    const account = this.byPhoneNumber(phone);
    if (!t || t.expires <= this.now()) throw new Error('no live QR login token is shown with these bytes');
    if (!account) throw new Error(`no account has the phone ${phone}`);
    t.scannedBy = account.id;
    this.scanned(t.authKeyId);
  }

  /** Refusals of every request of a key: AUTH_KEY_DUPLICATED for an account Telegram saw used twice at once. */
  gate(ctx: RpcContext): void {
    const userId = this.userOfKey(ctx.authKeyId);
    if (userId !== null && this.byId.get(userId)?.state === 'duplicated') throw new RpcFailure(406, 'AUTH_KEY_DUPLICATED');
  }

  /** The account a request needing one acts as: AUTH_KEY_UNREGISTERED for a key signed in as nobody (or revoked), USER_DEACTIVATED_BAN for a banned account. */
  accountOf(ctx: RpcContext): Account {
    const userId = this.userOfKey(ctx.authKeyId);
    const account = userId === null ? undefined : this.byId.get(userId);
    if (!account) throw new RpcFailure(401, 'AUTH_KEY_UNREGISTERED');
    if (account.banned) throw new RpcFailure(401, 'USER_DEACTIVATED_BAN');
    return account;
  }

  /** The sign-in methods; null for any other. */
  answer(ctx: RpcContext, request: unknown): { getBytes(): Buffer } | null {
    if (request instanceof Api.auth.SendCode) return this.sendCode(ctx, request);
    if (request instanceof Api.auth.SignIn) return this.signIn(ctx, request);
    if (request instanceof Api.account.GetPassword) {
      const account = this.passwordAccount(ctx);
      account.challenge = account.password ? srpChallenge(account.password) : null;
      return passwordAnswer(account.password, account.challenge, account.hint);
    }
    if (request instanceof Api.auth.CheckPassword) return this.checkPassword(ctx, request);
    if (request instanceof Api.auth.ExportLoginToken) return this.exportLoginToken(ctx, request);
    if (request instanceof Api.auth.ImportLoginToken) return this.importLoginToken(ctx, request.token);
    if (request instanceof Api.auth.LogOut) {
      this.accountOf(ctx);
      this.keys.delete(ctx.authKeyId);
      return new Api.auth.LoggedOut({});
    }
    return null;
  }

  private key(authKeyId: string): KeyState {
    let k = this.keys.get(authKeyId);
    if (!k) this.keys.set(authKeyId, (k = { userId: null, revoked: false, passwordFor: null }));
    return k;
  }

  private authorization(ctx: RpcContext, account: Account): Api.auth.Authorization {
    this.bind(ctx.authKeyId, account.id);
    return new Api.auth.Authorization({ user: this.peers.userObject(account.id, account.id) });
  }

  /** signed in, or SESSION_PASSWORD_NEEDED (401) with the password asked next on this key */
  private signedIn(ctx: RpcContext, account: Account): Api.auth.Authorization {
    if (account.banned) throw new RpcFailure(400, 'PHONE_NUMBER_BANNED');
    if (account.password) {
      this.key(ctx.authKeyId).passwordFor = account.id;
      throw new RpcFailure(401, 'SESSION_PASSWORD_NEEDED');
    }
    return this.authorization(ctx, account);
  }

  private sendCode(ctx: RpcContext, r: Api.auth.SendCode): Api.auth.SentCode {
    if (!(r.apiId > 0) || !r.apiHash) throw new RpcFailure(400, 'API_ID_INVALID');
    const phone = digits(r.phoneNumber);
    if (phone.length < 7 || phone.length > 15) throw new RpcFailure(400, 'PHONE_NUMBER_INVALID');
    const account = this.byPhone.get(phone);
    if (account?.banned) throw new RpcFailure(400, 'PHONE_NUMBER_BANNED');
    // the account lives on another data centre: the client moves there (GramJS: _switchDC) and asks again
    if (account && account.dcId !== ctx.dcId) throw new RpcFailure(303, `PHONE_MIGRATE_${account.dcId}`);
    const code = String(randomInt(10_000, 100_000));
    const hash = randomBytes(9).toString('hex');
    this.codes.set(phone, { hash, code, expired: false });
    // an account's code goes to its Telegram app; a number with no account gets an SMS (to sign up)
    return new Api.auth.SentCode({
      type: account ? new Api.auth.SentCodeTypeApp({ length: 5 }) : new Api.auth.SentCodeTypeSms({ length: 5 }),
      phoneCodeHash: hash,
      nextType: new Api.auth.CodeTypeSms(),
      timeout: 60,
    });
  }

  private signIn(ctx: RpcContext, r: Api.auth.SignIn): Api.auth.Authorization | Api.auth.AuthorizationSignUpRequired {
    const phone = digits(r.phoneNumber);
    const account = this.byPhone.get(phone);
    if (account && account.dcId !== ctx.dcId) throw new RpcFailure(303, `PHONE_MIGRATE_${account.dcId}`);
    if (!r.phoneCodeHash) throw new RpcFailure(400, 'PHONE_CODE_HASH_EMPTY');
    if (!r.phoneCode) throw new RpcFailure(400, 'PHONE_CODE_EMPTY');
    const sent = this.codes.get(phone);
    // a hash of an older code (a newer one was sent) or of none is an expired code
    if (!sent || sent.hash !== r.phoneCodeHash || sent.expired) throw new RpcFailure(400, 'PHONE_CODE_EXPIRED');
    if (sent.code !== r.phoneCode) throw new RpcFailure(400, 'PHONE_CODE_INVALID');
    if (!account) return new Api.auth.AuthorizationSignUpRequired({});
    this.codes.delete(phone);
    return this.signedIn(ctx, account);
  }

  /** the account whose password account.getPassword / auth.checkPassword are about on this key */
  private passwordAccount(ctx: RpcContext): Account {
    const k = this.keys.get(ctx.authKeyId);
    const id = k?.passwordFor ?? this.userOfKey(ctx.authKeyId);
    const account = id === null || id === undefined ? undefined : this.byId.get(id);
    if (!account) throw new RpcFailure(401, 'AUTH_KEY_UNREGISTERED');
    return account;
  }

  private checkPassword(ctx: RpcContext, r: Api.auth.CheckPassword): Api.auth.Authorization {
    const account = this.passwordAccount(ctx);
    if (!account.password) throw new RpcFailure(400, 'PASSWORD_EMPTY');
    const check = r.password;
    if (!(check instanceof Api.InputCheckPasswordSRP)) throw new RpcFailure(400, 'PASSWORD_HASH_INVALID');
    const challenge = account.challenge;
    if (!challenge || num(check.srpId) !== challenge.id) throw new RpcFailure(400, 'SRP_ID_INVALID');
    if (!srpCheck(account.password, challenge, Buffer.from(check.A), Buffer.from(check.M1))) throw new RpcFailure(400, 'PASSWORD_HASH_INVALID');
    account.challenge = null;
    return this.authorization(ctx, account);
  }

  private exportLoginToken(ctx: RpcContext, r: Api.auth.ExportLoginToken): Api.auth.TypeLoginToken {
    if (!(r.apiId > 0) || !r.apiHash) throw new RpcFailure(400, 'API_ID_INVALID');
    const k = this.key(ctx.authKeyId);
    if (k.passwordFor !== null) throw new RpcFailure(401, 'SESSION_PASSWORD_NEEDED');
    const scanned = [...this.tokens.values()].find((t) => t.authKeyId === ctx.authKeyId && t.scannedBy !== null && !t.accepted);
    if (scanned) return this.accept(ctx, scanned);
    const t: QrToken = { token: randomBytes(32), authKeyId: ctx.authKeyId, expires: this.now() + QR_SECONDS * 1000, scannedBy: null, accepted: false };
    this.tokens.set(t.token.toString('hex'), t);
    return new Api.auth.LoginToken({ token: t.token, expires: Math.floor(t.expires / 1000) });
  }

  private importLoginToken(ctx: RpcContext, token: Buffer): Api.auth.TypeLoginToken {
    const t = this.tokens.get(Buffer.from(token).toString('hex'));
    if (!t) throw new RpcFailure(400, 'AUTH_TOKEN_INVALID');
    if (t.accepted) throw new RpcFailure(400, 'AUTH_TOKEN_ALREADY_ACCEPTED');
    if (t.scannedBy === null) {
      if (t.expires <= this.now()) throw new RpcFailure(400, 'AUTH_TOKEN_EXPIRED');
      return new Api.auth.LoginToken({ token: t.token, expires: Math.floor(t.expires / 1000) });
    }
    return this.accept(ctx, t);
  }

  /** a scanned token: on the account's DC it signs this key in (or asks the password); elsewhere the client moves */
  private accept(ctx: RpcContext, t: QrToken): Api.auth.TypeLoginToken {
    const account = this.byId.get(t.scannedBy!)!;
    if (account.dcId !== ctx.dcId) return new Api.auth.LoginTokenMigrateTo({ dcId: account.dcId, token: t.token });
    t.accepted = true;
    return new Api.auth.LoginTokenSuccess({ authorization: this.signedIn(ctx, account) });
  }
}
