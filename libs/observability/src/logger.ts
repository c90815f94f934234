import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/** Paths pino replaces with "[redacted]" wherever they appear: tokens, credentials, secrets keys. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  'token',
  '*.token',
  'credentials',
  '*.credentials',
  'botToken',
  '*.botToken',
  'apiKey',
  '*.apiKey',
  '*.*.credentials',
  '*.*.botToken',
  'secretsKey',
  'secretsKeyPrevious',
  'SECRETS_KEY',
  'SECRETS_KEY_PREVIOUS',
  'ADMIN_TOKEN',
];

/** libs/core's `processSecrets()` registry, read through its global symbol (this package does not depend on core). */
function processSecrets(): { scrub(text: string): string } | undefined {
  return (globalThis as Record<symbol, { scrub(text: string): string } | undefined>)[Symbol.for('metronome.processSecrets')];
}

/** Scrubs registered secrets from the serialised line, so every field and whatever a library logged is covered. */
export function scrubLogLine(line: string): string {
  return processSecrets()?.scrub(line) ?? line;
}

/** The root logger of a service: pino JSON on stdout (or the given destination). */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Field names catch secrets where we expect them; this catches them by value anywhere else.
    hooks: { streamWrite: scrubLogLine },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
