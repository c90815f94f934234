// Signing a Telegram user account in: the phone number, then the code Telegram sent, then the
// two-step password when the account has one. Each refusal shows under the field it was about
// (a wrong code stays to be typed again; an expired code or a banned number starts over).
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Account, type TelegramSignIn } from '../api.js';
import { ErrorNote } from '../components.js';
import { qrDataUrl } from '../qr.js';

type Step = 'phone' | 'code' | 'password';

const STEP: Record<TelegramSignIn['state'], Step | null> = {
  not_started: 'phone',
  failed: 'phone',
  signed_out: 'phone',
  code_sent: 'code',
  qr_shown: null,
  password_needed: 'password',
  signed_in: null,
};

const LABELS: Record<Step, { label: string; button: string; type: string; hint: string }> = {
  phone: { label: 'Phone number', button: 'Send code', type: 'tel', hint: 'The Telegram account’s number, country code first (+44…).' },
  code: { label: 'Code', button: 'Sign in', type: 'text', hint: 'The code Telegram sent to the Telegram app (or by SMS).' },
  password: { label: 'Two-step password', button: 'Check password', type: 'password', hint: 'This account has two-step verification: its password.' },
};

export function TelegramSignInForm({ account, onSignedIn }: { account: Account; onSignedIn: () => void }) {
  const [state, setState] = useState<TelegramSignIn | null>(null);
  const [value, setValue] = useState('');
  const [fieldError, setFieldError] = useState<{ field: string; message: string } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.telegramSignIn(account.id).then(setState, setFailure);
  }, [account.id]);

  const step = state ? STEP[state.state] : null;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!step) return;
    setBusy(true);
    setFieldError(null);
    setFailure(null);
    try {
      const next =
        step === 'phone'
          ? await api.telegramSendCode(account.id, value)
          : step === 'code'
            ? await api.telegramCode(account.id, value)
            : await api.telegramPassword(account.id, value);
      setState(next);
      setValue('');
      if (next.state === 'signed_in') onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.details.length) {
        setFieldError(err.details[0]!);
        // the refusal may have ended the sign-in (an expired code): the form follows the state
        setState(await api.telegramSignIn(account.id));
      } else setFailure(err);
    } finally {
      setBusy(false);
    }
  };

  /** QR login: a code to scan, then a look whether it was (the API asks Telegram). */
  const qr = async (start: boolean) => {
    setFailure(null);
    try {
      const next = start ? await api.telegramQr(account.id) : await api.telegramSignIn(account.id);
      setState(next);
      if (next.state === 'signed_in') onSignedIn();
    } catch (err) {
      setFailure(err);
    }
  };

  if (!state) return <ErrorNote error={failure} />;
  if (state.state === 'qr_shown' && state.qr)
    return (
      <div class="fix pairing" data-telegram-sign-in="qr_shown">
        <img src={qrDataUrl(state.qr.url)} alt="QR code: Telegram → Settings → Devices → Link Desktop Device" width={240} height={240} />
        <button type="button" class="primary" onClick={() => void qr(false)}>
          I scanned it
        </button>
        <ErrorNote error={failure} />
      </div>
    );
  if (!step) return <p role="status">Signed in: the account is active.</p>;
  const { label, button, type, hint } = LABELS[step];
  const inputId = `tg-${step}-${account.id}`;
  // a refusal naming another field (an expired code sends the form back to the phone) shows above
  const shown = fieldError ?? (state.error && STEP[state.state] === 'phone' ? state.error : null);
  const here = shown && shown.field === step ? shown : null;
  return (
    <form class="fix" data-telegram-sign-in={state.state} onSubmit={(e) => void submit(e)}>
      {shown && !here && (
        <p class="error" role="alert">
          {shown.message}
        </p>
      )}
      {state.phone && step !== 'phone' && <p class="muted">Signing in {state.phone}.</p>}
      <label for={inputId}>{label}</label>
      <input
        id={inputId}
        type={type}
        autoComplete="off"
        value={value}
        required
        aria-invalid={here ? 'true' : undefined}
        aria-describedby={here ? `${inputId}-error` : `${inputId}-hint`}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      {here ? (
        <span id={`${inputId}-error`} class="error">
          {here.message}
        </span>
      ) : (
        <span id={`${inputId}-hint`} class="muted">
          {hint}
        </span>
      )}
      <button type="submit" class="primary" disabled={busy}>
        {button}
      </button>
      {step === 'phone' && (
        <button type="button" onClick={() => void qr(true)}>
          Sign in with a QR code
        </button>
      )}
      <ErrorNote error={failure} />
    </form>
  );
}
