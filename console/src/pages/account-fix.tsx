// The fixes an account card offers: lifting automatic cooling, a new API key or bot token for a
// disconnected account, pairing WhatsApp (a new account's first pairing too) or importing its
// linked session, and signing a Telegram user account in.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Account, type FieldError, type Pairing } from '../api.js';
import { ErrorNote } from '../components.js';
import { time } from '../format.js';
import { qrDataUrl } from '../qr.js';
import { SessionImport } from './session-import.js';
import { TelegramSignInForm } from './telegram-sign-in.js';

const COOLING_REASONS: Record<string, string> = {
  flood_waits: 'the platform made it wait too often',
  failures: 'too many of its last sends failed',
};

/** Lifting what holds an account (its cooling, or a 463 on its new chats: one call), asked first. */
export function useLift(account: Account, onLifted: (a: Account) => void) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const lift = async () => {
    setBusy(true);
    setFailure(null);
    try {
      onLifted(await api.liftCooling(account.id));
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  return { confirming, setConfirming, busy, failure, lift };
}

/** Why the account cools and until when; lifting it asks first. */
export function Cooling({ account, onLifted }: { account: Account; onLifted: (a: Account) => void }) {
  const { confirming, setConfirming, busy, failure, lift } = useLift(account, onLifted);
  const cooling = account.cooling!;
  return (
    <div class="fix" data-cooling>
      {cooling.advice ? (
        // a platform's restriction: no end of its own, the advice says which one and what to do
        <p>Restricted: {cooling.advice} Its runs wait until then.</p>
      ) : (
        <p>
          Cooling until {time(cooling.until)}: {COOLING_REASONS[cooling.reason] ?? cooling.reason}. Its runs wait and go on by themselves then.
        </p>
      )}
      {confirming ? (
        <div class="actions" role="group" aria-label="Confirm lift cooling">
          <span>Send again now? The lowered pace stays and recovers step by step.</span>
          <button type="button" class="danger" disabled={busy} onClick={() => void lift()}>
            Yes, lift cooling
          </button>
          <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
            Keep cooling
          </button>
        </div>
      ) : (
        <button type="button" onClick={() => setConfirming(true)}>
          Lift cooling
        </button>
      )}
      <ErrorNote error={failure} />
    </div>
  );
}

export function Fix({ account, onFixed }: { account: Account; onFixed: (a: Account) => void }) {
  if (account.platform === 'telegram_user') return <TelegramSignInForm account={account} onSignedIn={() => onFixed({ ...account, status: 'active' })} />;
  if (account.platform !== 'whatsapp') return <NewCredentials account={account} onFixed={onFixed} />;
  return (
    <>
      <Pair account={account} />
      <SessionImport account={account} onImported={onFixed} />
    </>
  );
}

function NewCredentials({ account, onFixed }: { account: Account; onFixed: (a: Account) => void }) {
  const field = account.platform === 'telegram' ? 'botToken' : 'apiKey';
  const what = account.platform === 'telegram' ? 'bot token' : 'API key';
  const why =
    account.platform === 'telegram'
      ? 'The bot token was refused (revoked or wrong). Paste the new token from @BotFather; the account becomes active again.'
      : 'The platform refused the API key. Paste the key the platform issued for this account; the account becomes active again.';
  const [value, setValue] = useState('');
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [failure, setFailure] = useState<unknown>(null);
  const inputId = `fix-${account.id}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    setErrors([]);
    setFailure(null);
    try {
      onFixed(await api.patchAccount(account.id, { credentials: { [field]: value } }));
      setValue('');
    } catch (err) {
      if (err instanceof ApiError && err.details.length) setErrors(err.details);
      else setFailure(err);
    }
  };
  const fieldError = errors.find((d) => d.field === `credentials.${field}` || d.field === 'credentials');
  return (
    <form class="fix" onSubmit={(e) => void submit(e)}>
      <p>{why}</p>
      <label for={inputId}>New {what}</label>
      <input
        id={inputId}
        type="password"
        autoComplete="off"
        value={value}
        required
        aria-invalid={fieldError ? 'true' : undefined}
        aria-describedby={fieldError ? `${inputId}-error` : undefined}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      {fieldError && (
        <span id={`${inputId}-error`} class="error">
          {fieldError.message}
        </span>
      )}
      <button type="submit" class="primary">
        Save {what}
      </button>
      <ErrorNote error={failure} />
    </form>
  );
}

// A QR code stops working at its expiresAt: the account falls back to disconnected and the API
// says so with an account event. While the operator keeps the QR on screen, a new one replaces it
// (a few times, like WhatsApp's own linking screen), then a button asks for another.
const QR_RENEWALS = 5;
const REPAIR = 'WhatsApp logged this device out. Pair it again: scan a QR code, or leave a phone number to get a code to type on that phone.';

export function Pair({ account, intro = REPAIR }: { account: Account; intro?: string }) {
  const [phone, setPhone] = useState('');
  const [pairing, setPairing] = useState<Pairing | null>(null);
  const [renewals, setRenewals] = useState(0);
  const [expired, setExpired] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  // the account went `pairing` for the code shown: its fall back to `disconnected` is the expiry
  const sawPairing = useRef(false);
  const request = async (phoneNumber: string | undefined) => {
    setFailure(null);
    setExpired(false);
    sawPairing.current = false;
    try {
      setPairing(await api.pair(account.id, phoneNumber));
    } catch (err) {
      setPairing(null);
      setFailure(err);
    }
  };
  useEffect(() => {
    if (!pairing) return;
    if (account.status === 'pairing') sawPairing.current = true;
    else if (account.status === 'disconnected' && sawPairing.current) {
      sawPairing.current = false;
      if (pairing.qr && renewals < QR_RENEWALS) {
        setRenewals((n) => n + 1);
        void request(undefined);
      } else {
        setPairing(null);
        setExpired(true);
      }
    }
  }, [account.status, pairing]);
  const start = (e: Event) => {
    e.preventDefault();
    setRenewals(0);
    void request(phone.trim() || undefined);
  };
  const phoneId = `pair-${account.id}`;
  return (
    <form class="fix" onSubmit={start}>
      <p>{intro}</p>
      <label for={phoneId}>Phone number (optional, international)</label>
      <input id={phoneId} type="tel" inputMode="tel" value={phone} onInput={(e) => setPhone(e.currentTarget.value)} />
      <button type="submit" class="primary">
        {phone.trim() ? 'Get a pairing code' : pairing?.qr || expired ? 'Show a new QR code' : 'Show QR code'}
      </button>
      {expired && <p role="status">The code expired before the phone used it. Ask for a new one.</p>}
      {pairing && (
        <div class="pairing" role="status">
          {pairing.qr && <img src={qrDataUrl(pairing.qr)} alt="QR code: WhatsApp → Linked devices → Link a device" width={240} height={240} />}
          {pairing.pairingCode && (
            <p>
              Pairing code: <strong class="code">{pairing.pairingCode}</strong>
            </p>
          )}
          <p class="muted">Valid until {time(pairing.expiresAt)}. The account turns active once the phone accepts.</p>
        </div>
      )}
      <ErrorNote error={failure} />
    </form>
  );
}
