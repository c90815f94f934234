import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Paths never logged: bearer tokens, account credentials, secrets keys. pino replaces
 * their values with "[redacted]" wherever they appear in a logged object.
 */
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

/**
 * The process's registry of secrets by value (libs/core `processSecrets()`: every bot token,
 * API key and WhatsApp auth secret this process opened). Read through its global symbol because
 * this package does not depend on libs/core; absent until something registers a secret.
 */
function processSecrets(): { scrub(text: string): string } | undefined {
  return (globalThis as Record<symbol, { scrub(text: string): string } | undefined>)[Symbol.for('metronome.processSecrets')];
}

/**
 * Scrubs registered secrets from a finished log line. Done on the serialised line, so the
 * message, every field, an error's message and stack, and whatever a library logged are all
 * covered, whoever produced them.
 */
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
