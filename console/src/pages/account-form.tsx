// Add account: a dialog for each platform. `http` takes the account's id on the platform and the
// API key it issued; `telegram` a bot token from @BotFather; `whatsapp` only a name, then the
// pairing (QR code or phone code) shown in the same dialog. Every platform's pace, warm-up and
// human gap start at what the API gives a new account of it (GET /v1/account-defaults), said and
// explained, and go with the account as shown. The API judges the input: its field errors go
// beside the inputs they name, and nothing typed is lost.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { allPages, api, ApiError, type Account, type AccountBody, type AccountDefaults, type Me, type Platform, type Tenant } from '../api.js';
import { ErrorNote } from '../components.js';
import { FieldNote, invalidProps, placeFieldErrors } from '../field.js';
import { Pair } from './account-fix.js';
import { HumanGap, inEffect, NumberField, num, PACE_HINT, pair, WarmupCheck } from './account-limits.js';
import { LimitFields, limitBody, limitPlace, limitValuesOf, type LimitValues } from './limit-settings.js';

const PLATFORMS: { value: Platform; label: string }[] = [
  { value: 'http', label: 'HTTP platform (API key)' },
  { value: 'telegram', label: 'Telegram bot (bot token)' },
  { value: 'whatsapp', label: 'WhatsApp (pair a phone)' },
  { value: 'telegram_user', label: 'Telegram account (sign in with its phone)' },
];

// API field → input id
const PLACES: Record<string, string> = {
  platform: 'new-platform',
  name: 'new-name',
  externalId: 'new-externalId',
  tenantId: 'new-tenantId',
  'credentials.apiKey': 'new-apiKey',
  'credentials.botToken': 'new-botToken',
  proxy: 'new-proxy',
  maxSendPerMinute: 'new-pace',
  'sendDelaySeconds.max': 'new-gapMax',
  sendDelaySeconds: 'new-gapMin',
  'sendDelaySeconds.min': 'new-gapMin',
  warmup: 'new-warmup',
};
const ORDER = [
  'new-tenantId',
  'new-platform',
  'new-name',
  'new-externalId',
  'new-apiKey',
  'new-botToken',
  'new-proxy',
  'new-pace',
  'new-warmup',
  'new-gapMin',
  'new-gapMax',
];

// Why a platform starts where it does; the numbers are the API's.
const WHY: Record<Platform, string> = {
  http: 'An HTTP platform takes what its API allows, so it needs no gap.',
  telegram: 'Telegram tells a bot when to wait, and Metronome waits, so it needs no gap.',
  whatsapp: 'WhatsApp bans numbers that send like a machine: hence the gap, and the warm-up for a number that is new.',
  telegram_user: 'Telegram restricts accounts that send in bulk: give a new account a gap and the warm-up.',
};

interface Limits {
  pace: string;
  gapMin: string;
  gapMax: string;
  warmup: boolean;
}

/** The limits a new account of the platform starts with: the API's defaults for it. */
function limitsOf(d: AccountDefaults | undefined): Limits {
  return {
    pace: d ? String(d.maxSendPerMinute) : '',
    gapMin: d?.sendDelaySeconds ? String(d.sendDelaySeconds.min) : '',
    gapMax: d?.sendDelaySeconds ? String(d.sendDelaySeconds.max) : '',
    warmup: false,
  };
}

/** "40 sends a minute, a 30–60 s gap, no warm-up": what the platform's new account gets. */
function defaultsWords(d: AccountDefaults): string {
  const gap = d.sendDelaySeconds ? `a ${d.sendDelaySeconds.min}–${d.sendDelaySeconds.max} s gap between sends` : 'no gap';
  return `${d.maxSendPerMinute} sends a minute, ${gap}, no warm-up`;
}

/**
 * The Add account button and its dialog. `accounts` is the page's live list (a new WhatsApp
 * account's status while pairing); `defaults` what the API gives a new account of each platform.
 */
export function AddAccount({
  me,
  accounts,
  defaults,
  onCreated,
}: {
  me: Me;
  accounts: Account[];
  defaults: AccountDefaults[] | null;
  onCreated: (a: Account) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <>
      <button type="button" class="primary" onClick={() => setOpen(true)}>
        Add account
      </button>
      <dialog ref={dialog} class="dialog" aria-labelledby="new-account-title" onClose={() => setOpen(false)}>
        {open && <NewAccount me={me} accounts={accounts} defaults={defaults} onCreated={onCreated} onDone={() => setOpen(false)} />}
      </dialog>
    </>
  );
}

function NewAccount({
  me,
  accounts,
  defaults,
  onCreated,
  onDone,
}: {
  me: Me;
  accounts: Account[];
  defaults: AccountDefaults[] | null;
  onCreated: (a: Account) => void;
  onDone: () => void;
}) {
  const [platform, setPlatform] = useState<Platform>('http');
  const platformDefaults = defaults?.find((d) => d.platform === platform);
  const [limits, setLimits] = useState<Limits>(() => limitsOf(platformDefaults));
  // another platform starts from its own defaults, as does the first one once they are loaded
  const choose = (p: Platform) => {
    setPlatform(p);
    setLimits(limitsOf(defaults?.find((d) => d.platform === p)));
  };
  useEffect(() => setLimits(limitsOf(platformDefaults)), [defaults]);
  const limitSettings = platformDefaults?.limitSettings ?? [];
  const [lv, setLv] = useState<LimitValues>({});
  const [values, setValues] = useState({ name: '', externalId: '', apiKey: '', botToken: '', tenantId: '', proxy: '' });
  const [errors, setErrors] = useState<Map<string, string[]>>(new Map());
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Account | null>(null);
  const [tenants, setTenants] = useState<Tenant[]>([]);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (me.admin) allPages((cursor) => api.tenants({ limit: 500, cursor })).then(setTenants, setFailure);
  }, []);
  useLayoutEffect(() => {
    const first = ORDER.find((id) => errors.has(id));
    if (first) form.current?.querySelector<HTMLElement>(`#${first}`)?.focus();
  }, [errors]);

  const input = (key: keyof typeof values, id: string) => ({
    id,
    value: values[key],
    onInput: (e: Event) => setValues((v) => ({ ...v, [key]: (e.currentTarget as HTMLInputElement).value })),
    ...invalidProps(id, errors.get(id)),
  });
  const note = (id: string) => <FieldNote id={id} errors={errors.get(id)} />;

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setFailure(null);
    const common = {
      name: values.name,
      ...(me.admin && { tenantId: values.tenantId }),
      // as shown: an empty pace leaves it to the API's default
      ...(limits.pace.trim() !== '' && { maxSendPerMinute: num(limits.pace) }),
      sendDelaySeconds: pair(limits.gapMin, limits.gapMax, 'min', 'max'),
      warmup: limits.warmup ? {} : null,
      ...limitBody(limitSettings, { ...limitValuesOf(limitSettings), ...lv }),
    };
    const body = (
      platform === 'http'
        ? { platform, ...common, externalId: values.externalId, credentials: { apiKey: values.apiKey } }
        : platform === 'telegram'
          ? { platform, ...common, credentials: { botToken: values.botToken } }
          : { platform, ...common, ...(values.proxy.trim() !== '' && { proxy: values.proxy.trim() }) }
    ) as AccountBody;
    try {
      const account = await api.createAccount(body);
      setErrors(new Map());
      onCreated(account);
      if (platform === 'whatsapp') setCreated(account);
      else onDone();
    } catch (err) {
      if (err instanceof ApiError && err.details.length > 0) {
        setErrors(
          placeFieldErrors(
            err.details,
            (f) =>
              PLACES[f] ??
              limitPlace(limitSettings, 'new-limit', f) ??
              (f === 'credentials' ? (platform === 'telegram' ? 'new-botToken' : 'new-apiKey') : undefined),
          ),
        );
      } else {
        setErrors(new Map());
        setFailure(err);
      }
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    // the live copy: its status follows the pairing (pairing → active)
    const live = accounts.find((a) => a.id === created.id) ?? created;
    return (
      <div class="dialog-body">
        <h2 id="new-account-title">Pair {live.name}</h2>
        {live.status === 'active' ? (
          <p role="status">Paired: the account is active.</p>
        ) : (
          <Pair
            account={live}
            intro="Pair the phone: scan a QR code with WhatsApp (Linked devices → Link a device), or give the phone number to get a code to type on that phone."
          />
        )}
        <div class="actions">
          <button type="button" onClick={onDone}>
            {live.status === 'active' ? 'Done' : 'Pair later'}
          </button>
        </div>
      </div>
    );
  }

  const formErrors = errors.get('form');
  return (
    <form ref={form} class="dialog-body" noValidate onSubmit={(e) => void submit(e)}>
      <h2 id="new-account-title">Add account</h2>
      {formErrors && (
        <p class="error" role="alert">
          The account was not added: {formErrors.join('; ')}
        </p>
      )}
      {me.admin && (
        <div class="field">
          <label for="new-tenantId">Tenant</label>
          <select {...input('tenantId', 'new-tenantId')} onChange={(e) => setValues((v) => ({ ...v, tenantId: e.currentTarget.value }))}>
            <option value="">Choose a tenant</option>
            {tenants.map((t) => (
              <option value={t.id}>{t.name}</option>
            ))}
          </select>
          {note('new-tenantId')}
        </div>
      )}
      <div class="field">
        <label for="new-platform">Platform</label>
        <select
          id="new-platform"
          value={platform}
          onChange={(e) => choose(e.currentTarget.value as Platform)}
          {...invalidProps('new-platform', errors.get('new-platform'))}
        >
          {PLATFORMS.map((p) => (
            <option value={p.value}>{p.label}</option>
          ))}
        </select>
        {note('new-platform')}
      </div>
      <div class="field">
        <label for="new-name">Name</label>
        <input type="text" autoComplete="off" {...input('name', 'new-name')} />
        {note('new-name')}
      </div>
      {platform === 'http' && (
        <>
          <div class="field">
            <label for="new-externalId">Account id on the platform</label>
            <input type="text" autoComplete="off" spellcheck={false} {...input('externalId', 'new-externalId')} />
            {note('new-externalId')}
          </div>
          <div class="field">
            <label for="new-apiKey">API key</label>
            <input type="password" autoComplete="off" {...input('apiKey', 'new-apiKey')} />
            {note('new-apiKey')}
          </div>
        </>
      )}
      {platform === 'telegram' && (
        <div class="field">
          <label for="new-botToken">Bot token</label>
          <input type="password" autoComplete="off" {...input('botToken', 'new-botToken')} />
          <span class="muted">From @BotFather: /newbot, then the token it answers.</span>
          {note('new-botToken')}
        </div>
      )}
      {(platform === 'whatsapp' || platform === 'telegram_user') && (
        <div class="field">
          <label for="new-proxy">Proxy (optional)</label>
          <input type="password" autoComplete="off" spellcheck={false} placeholder="socks5://user:password@host:1080" {...input('proxy', 'new-proxy')} />
          <span class="muted">
            The account connects through it: socks5:// or socks5h://{platform === 'telegram_user' ? ', or mtproxy://secret@host:port' : ''}. Kept sealed; only
            its host and port are shown.
          </span>
          {note('new-proxy')}
        </div>
      )}
      <fieldset class="subset limits">
        <legend>Sending limits</legend>
        <p class="muted">
          {platformDefaults ? `A new account here starts at ${defaultsWords(platformDefaults)}. ` : ''}
          {WHY[platform]}
        </p>
        <NumberField
          id="new-pace"
          label="Pace (sends a minute)"
          hint={PACE_HINT}
          value={limits.pace}
          onValue={(v) => setLimits((l) => ({ ...l, pace: v }))}
          errors={errors.get('new-pace')}
        />
        <WarmupCheck
          id="new-warmup"
          checked={limits.warmup}
          onChecked={(on) => setLimits((l) => ({ ...l, warmup: on }))}
          errors={errors.get('new-warmup')}
          steps={platformDefaults?.warmupSteps}
        />
        <HumanGap
          ids={{ min: 'new-gapMin', max: 'new-gapMax' }}
          values={{ min: limits.gapMin, max: limits.gapMax }}
          errors={{ min: errors.get('new-gapMin'), max: errors.get('new-gapMax') }}
          onValue={(which, v) => setLimits((l) => ({ ...l, [which === 'min' ? 'gapMin' : 'gapMax']: v }))}
        />
        {inEffect(limits.pace, limits.gapMin, limits.gapMax) && <p class="muted">{inEffect(limits.pace, limits.gapMin, limits.gapMax)}</p>}
        <LimitFields
          settings={limitSettings}
          prefix="new-limit"
          values={{ ...limitValuesOf(limitSettings), ...lv }}
          errors={errors}
          onValue={(field, part, v) => setLv((x) => ({ ...x, [field]: { ...limitValuesOf(limitSettings)[field], ...x[field], [part]: v } }))}
        />
      </fieldset>
      {platform === 'whatsapp' && <p class="muted">Once added, pair the phone here: a QR code to scan, or a code to type on the phone.</p>}
      <ErrorNote error={failure} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {platform === 'whatsapp' ? 'Save and pair' : 'Save account'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
