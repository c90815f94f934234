import { processSecrets, type SendResult } from '@metronome/core';
import type { PrepareResult, TransportAccount } from './transport.js';

/**
 * A transport holds an account's credentials opened; from then on they are secrets of this
 * process, scrubbed by value from every message it stores, answers or logs (libs/core
 * SecretScrubber). Every string credential is registered, and for a `<id>:<secret>` value (a
 * Telegram bot token) the secret part alone too, since an error may quote it without the id.
 */
export function registerCredentials(account: TransportAccount): void {
  for (const value of Object.values(account.credentials ?? {})) registerSecret(value);
}

export function registerSecret(value: unknown): void {
  if (typeof value !== 'string') return;
  const secrets = processSecrets();
  secrets.add(value);
  const colon = value.indexOf(':');
  if (colon >= 0) secrets.add(value.slice(colon + 1));
}

/**
 * `result` with its message scrubbed. Every SendResult a transport returns passes here, so no
 * platform text (an error description quoting a URL or header) carries a secret into
 * run_targets.error_message, a run's error summary, an API answer, an event or a log line.
 */
export function scrubResult<T extends SendResult>(result: T): T {
  return 'message' in result && typeof result.message === 'string' ? { ...result, message: processSecrets().scrub(result.message) } : result;
}

export function scrubPrepared(result: PrepareResult): PrepareResult {
  return result.ok ? result : { ok: false, result: scrubResult(result.result) };
}
