// Module hooks for the capacity benchmark's WhatsApp server process (registered by
// whatsapp-server-process.mjs), lifting two of @openclaw/crabline's test-sized limits; the wire
// protocol, Signal sessions and acknowledgements stay crabline's own.
// 1. Its recorder appends every WebSocket node it reads (keep-alive pings included) and every
//    accepted message to a file, one at a time under a lock file and fsynced, before it answers:
//    about 60 a second on tmpfs here, which 500 idle sockets' pings alone come near. The server
//    gets this module's in-memory recorder instead: events go to `onEvent` in order.
// 2. Its Signal store keeps at most 1,024 identities (the accounts' own included), 32 sessions
//    each, and 32 one-time pre-keys handed out per identity within 5 minutes: 1,000 accounts
//    sending to their own chats, handed between senders, need more. Raised to LIMITS.
const LIMITS = {
  MAX_WHATSAPP_SIGNAL_BUNDLES: 8_192,
  MAX_WHATSAPP_SIGNAL_SESSIONS_PER_BUNDLE: 1_024,
  MAX_WHATSAPP_SIGNAL_PREKEYS_PER_BUNDLE: 1_024,
};
const SERVERS = '/@openclaw/crabline/dist/src/servers/';

export async function resolve(specifier, context, next) {
  if (specifier === './recorder.js' && context.parentURL?.endsWith(`${SERVERS}whatsapp.js`)) return { url: import.meta.url, shortCircuit: true };
  return next(specifier, context);
}

export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (!url.endsWith(`${SERVERS}whatsapp-baileys-websocket.js`)) return loaded;
  let source = String(loaded.source);
  for (const [name, value] of Object.entries(LIMITS)) {
    const at = new RegExp(`(export const ${name} = )[\\d_]+;`);
    if (!at.test(source)) throw new Error(`crabline no longer declares ${name}: review bench/scenarios/crabline-capacity-hooks.mjs`);
    source = source.replace(at, `$1${value};`);
  }
  return { ...loaded, source };
}

export class ServerRecorderCommittedError extends AggregateError {
  committed = true;
}

/** What crabline's whatsapp.js uses of its recorder: record, recordCommitted, close. */
export function createServerRecorder({ onEvent }) {
  let last = Promise.resolve();
  let closing = false;
  const record = (event) => {
    if (closing) return Promise.resolve();
    last = last.then(() => onEvent?.(event));
    return last;
  };
  return {
    record,
    recordCommitted: record,
    close: async () => {
      closing = true;
      await last;
    },
  };
}
