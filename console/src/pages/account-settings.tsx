// An account's settings: name, pace, group concurrency, caps, warm-up, the human gap between
// sends, typing first, and (WhatsApp, Telegram accounts) the opt-out keywords. Only what the
// platform accepts is shown (http shows no typing; only whatsapp and telegram_user read opt-out
// replies), and only what changed is sent (PATCH); the API's field errors go beside the inputs
// they name.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Account, type AccountDefaults } from '../api.js';
import { ErrorNote } from '../components.js';
import { FieldNote, invalidProps, placeFieldErrors } from '../field.js';
import { HumanGap, NumberField, num, PACE_HINT, pair, WarmupCheck } from './account-limits.js';
import { LimitFields, limitBody, limitPlace, limitValuesOf, type LimitValues } from './limit-settings.js';

interface Settings {
  name: string;
  pace: string;
  concurrency: string;
  hourlyCap: string;
  dailyCap: string;
  warmup: boolean;
  gapMin: string;
  gapMax: string;
  typingCps: string;
  typingMax: string;
  keywords: string;
  /** a new proxy URL (never shown again once saved); empty: the proxy as it is */
  proxy: string;
  proxyRemove: boolean;
  /** connection `always` (whatsapp, telegram_user) */
  alwaysConnected: boolean;
}
type Key = Exclude<keyof Settings, 'warmup' | 'proxyRemove' | 'alwaysConnected'>;

// The platforms whose replies are read (CONTRACT §3, "Opt-out by reply"): what the keywords do there.
const OPT_OUT_HINT: Partial<Record<Account['platform'], string>> = {
  whatsapp: 'A person who replies exactly one of these in a one-to-one chat is never sent to again.',
  telegram_user:
    'A person who writes exactly one of these to this account in a private chat is never sent to again. Messages that arrive while it is not connected are not read.',
};

const str = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

function settingsOf(a: Account): Settings {
  return {
    name: a.name,
    pace: str(a.maxSendPerMinute),
    concurrency: str(a.groupConcurrency),
    hourlyCap: str(a.hourlyCap),
    dailyCap: str(a.dailyCap),
    warmup: a.warmup !== null,
    gapMin: str(a.sendDelaySeconds?.min),
    gapMax: str(a.sendDelaySeconds?.max),
    typingCps: str(a.typing?.charsPerSecond),
    typingMax: str(a.typing?.maxSeconds),
    keywords: a.optOutKeywords.join('\n'),
    proxy: '',
    proxyRemove: false,
    alwaysConnected: a.connection === 'always',
  };
}

/** The PATCH body the settings stand for; the platform decides which fields exist. */
function bodyOf(s: Settings, platform: Account['platform']): Record<string, unknown> {
  return {
    name: s.name,
    maxSendPerMinute: num(s.pace),
    groupConcurrency: num(s.concurrency),
    hourlyCap: num(s.hourlyCap),
    dailyCap: num(s.dailyCap),
    // on: the default steps from now; a warm-up already on and left on is not sent
    warmup: s.warmup ? {} : null,
    sendDelaySeconds: pair(s.gapMin, s.gapMax, 'min', 'max'),
    ...(platform !== 'http' && { typing: pair(s.typingCps, s.typingMax, 'charsPerSecond', 'maxSeconds') }),
    ...((platform === 'whatsapp' || platform === 'telegram_user') && {
      proxy: s.proxyRemove ? null : s.proxy.trim() === '' ? undefined : s.proxy.trim(),
      connection: s.alwaysConnected ? 'always' : 'on_demand',
    }),
    ...(OPT_OUT_HINT[platform] !== undefined && {
      optOutKeywords: s.keywords
        .split(/[\n,]/)
        .map((k) => k.trim())
        .filter(Boolean),
    }),
  };
}

function changed(before: Settings, now: Settings, platform: Account['platform']): Record<string, unknown> {
  const a = bodyOf(before, platform);
  const b = bodyOf(now, platform);
  return Object.fromEntries(Object.entries(b).filter(([k, v]) => JSON.stringify(a[k]) !== JSON.stringify(v)));
}

const PLACES: [RegExp, Key | 'warmup'][] = [
  [/^name$/, 'name'],
  [/^maxSendPerMinute$/, 'pace'],
  [/^groupConcurrency$/, 'concurrency'],
  [/^hourlyCap$/, 'hourlyCap'],
  [/^dailyCap$/, 'dailyCap'],
  [/^warmup/, 'warmup'],
  [/^sendDelaySeconds\.max$/, 'gapMax'],
  [/^sendDelaySeconds/, 'gapMin'],
  [/^typing\.maxSeconds$/, 'typingMax'],
  [/^typing/, 'typingCps'],
  [/^optOutKeywords/, 'keywords'],
  [/^proxy$/, 'proxy'],
];
const ORDER: (Key | 'warmup')[] = [
  'name',
  'pace',
  'concurrency',
  'hourlyCap',
  'dailyCap',
  'warmup',
  'gapMin',
  'gapMax',
  'typingCps',
  'typingMax',
  'keywords',
  'proxy',
];

/** `defaults`: what the API gives a new account of its platform (the warm-up's default steps); null until loaded. */
export function AccountSettings({
  account,
  defaults,
  onSaved,
  onClose,
}: {
  account: Account;
  defaults: AccountDefaults | undefined;
  onSaved: (a: Account) => void;
  onClose: () => void;
}) {
  const initial = useRef(settingsOf(account));
  const [s, setS] = useState(initial.current);
  const limitSettings = defaults?.limitSettings ?? [];
  const initialLimits = useRef<LimitValues>(limitValuesOf(limitSettings, account));
  const [lv, setLv] = useState(initialLimits.current);
  useEffect(() => {
    initialLimits.current = limitValuesOf(limitSettings, account);
    setLv(initialLimits.current);
  }, [defaults]);
  const [errors, setErrors] = useState<Map<string, string[]>>(new Map());
  const [failure, setFailure] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const id = (key: string) => `set-${account.id}-${key}`;
  useLayoutEffect(() => {
    const first = ORDER.find((k) => errors.has(k));
    if (first) form.current?.querySelector<HTMLElement>(`#${id(first)}`)?.focus();
  }, [errors]);

  const input = (key: Key) => ({
    id: id(key),
    value: s[key],
    onInput: (e: Event) => setS((v) => ({ ...v, [key]: (e.currentTarget as HTMLInputElement).value })),
    ...invalidProps(id(key), errors.get(key)),
  });
  const note = (key: Key) => <FieldNote id={id(key)} errors={errors.get(key)} />;
  const number = (key: Key, label: string, hint?: string) => (
    <NumberField id={id(key)} label={label} hint={hint} value={s[key]} onValue={(v) => setS((x) => ({ ...x, [key]: v }))} errors={errors.get(key)} />
  );

  const submit = async (e: Event) => {
    e.preventDefault();
    setFailure(null);
    setNotice(null);
    const before = limitBody(limitSettings, initialLimits.current);
    const limits = Object.entries(limitBody(limitSettings, lv)).filter(([k, v]) => JSON.stringify(before[k]) !== JSON.stringify(v));
    const body = { ...changed(initial.current, s, account.platform), ...Object.fromEntries(limits) };
    if (Object.keys(body).length === 0) {
      setErrors(new Map());
      setNotice('Nothing changed.');
      return;
    }
    setBusy(true);
    try {
      const saved = await api.patchAccount(account.id, body);
      setErrors(new Map());
      initial.current = settingsOf(saved);
      setS(initial.current);
      initialLimits.current = limitValuesOf(limitSettings, saved);
      setLv(initialLimits.current);
      onSaved(saved);
      setNotice('Settings saved.');
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0)
        setErrors(placeFieldErrors(err.details, (f) => PLACES.find(([re]) => re.test(f))?.[1] ?? limitPlace(limitSettings, id('limit'), f)));
      else {
        setErrors(new Map());
        setFailure(err);
      }
    } finally {
      setBusy(false);
    }
  };

  const formErrors = errors.get('form');
  const optOutHint = OPT_OUT_HINT[account.platform];
  return (
    <form ref={form} class="settings" noValidate aria-label={`Settings of ${account.name}`} onSubmit={(e) => void submit(e)}>
      {formErrors && (
        <p class="error" role="alert">
          Not saved: {formErrors.join('; ')}
        </p>
      )}
      <div class="field">
        <label for={id('name')}>Name</label>
        <input type="text" autoComplete="off" {...input('name')} />
        {note('name')}
      </div>
      <div class="row">
        {number('pace', 'Pace (sends a minute)', PACE_HINT)}
        {number('concurrency', 'Group concurrency', 'Chats sent to at once.')}
      </div>
      <div class="row">
        {number('hourlyCap', 'Hourly cap (empty: none)')}
        {number('dailyCap', 'Daily cap (empty: none)')}
      </div>
      <WarmupCheck
        id={id('warmup')}
        checked={s.warmup}
        onChecked={(on) => setS((v) => ({ ...v, warmup: on }))}
        errors={errors.get('warmup')}
        steps={account.warmup?.steps ?? defaults?.warmupSteps}
      />
      {account.warmup && s.warmup && (
        <p class="muted">Warm-up cap today: {account.warmup.capToday === null ? 'none (warm-up over)' : `${account.warmup.capToday} sends`}.</p>
      )}
      <HumanGap
        ids={{ min: id('gapMin'), max: id('gapMax') }}
        values={{ min: s.gapMin, max: s.gapMax }}
        errors={{ min: errors.get('gapMin'), max: errors.get('gapMax') }}
        onValue={(which, v) => setS((x) => ({ ...x, [which === 'min' ? 'gapMin' : 'gapMax']: v }))}
      />
      <LimitFields
        settings={limitSettings}
        prefix={id('limit')}
        values={lv}
        errors={errors}
        onValue={(field, part, v) => setLv((x) => ({ ...x, [field]: { ...x[field], [part]: v } }))}
      />
      {account.platform !== 'http' && (
        <fieldset class="subset">
          <legend>Typing before each message (empty: none)</legend>
          <div class="row">
            {number('typingCps', 'Characters a second')}
            {number('typingMax', 'Longest typing (seconds)')}
          </div>
        </fieldset>
      )}
      {optOutHint !== undefined && (
        <div class="field">
          <label for={id('keywords')}>Opt-out keywords (one a line; empty: off)</label>
          <textarea rows={3} spellcheck={false} {...input('keywords')} />
          <span class="muted">{optOutHint}</span>
          {note('keywords')}
        </div>
      )}
      {(account.platform === 'whatsapp' || account.platform === 'telegram_user') && (
        <div class="field">
          <label for={id('proxy')}>
            New proxy (empty: keep {account.proxy ? `${account.proxy.scheme}://${account.proxy.host}:${account.proxy.port}` : 'none'})
          </label>
          <input type="password" autoComplete="off" spellcheck={false} placeholder="socks5://user:password@host:1080" {...input('proxy')} />
          <span class="muted">
            socks5:// or socks5h://{account.platform === 'telegram_user' ? ', or mtproxy://secret@host:port' : ''}; kept sealed, never shown again.
          </span>
          {note('proxy')}
          {account.proxy && (
            <div class="check">
              <input
                id={id('proxyRemove')}
                type="checkbox"
                checked={s.proxyRemove}
                onChange={(e) => setS((v) => ({ ...v, proxyRemove: e.currentTarget.checked }))}
              />
              <label for={id('proxyRemove')}>Remove the proxy (connect directly)</label>
            </div>
          )}
        </div>
      )}
      {(account.platform === 'whatsapp' || account.platform === 'telegram_user') && (
        <div class="check">
          <input
            id={id('alwaysConnected')}
            type="checkbox"
            checked={s.alwaysConnected}
            onChange={(e) => setS((v) => ({ ...v, alwaysConnected: e.currentTarget.checked }))}
          />
          <label for={id('alwaysConnected')}>Stay connected between campaigns</label>
          <span class="muted">Replies, STOPs and receipts arrive as they happen; off: the account connects only while its campaigns send.</span>
        </div>
      )}
      <ErrorNote error={failure} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Save settings
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
        {notice && <span role="status">{notice}</span>}
      </div>
    </form>
  );
}
