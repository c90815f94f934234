import { processSecrets, type SendResult } from '@metronome/core';
import type { PrepareResult, TransportAccount } from './transport.js';

/** Opened credentials become process secrets, scrubbed by value; a bot token's secret part alone too (errors may quote it). */
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

/** Every SendResult passes here, so no platform text carries a secret into the database, an answer, an event or a log. */
export function scrubResult<T extends SendResult>(result: T): T {
  return 'message' in result && typeof result.message === 'string' ? { ...result, message: processSecrets().scrub(result.message) } : result;
}

export function scrubPrepared(result: PrepareResult): PrepareResult {
  return result.ok ? result : { ok: false, result: scrubResult(result.result) };
}
