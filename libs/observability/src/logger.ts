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
  '*.*.credentials',
  '*.*.botToken',
  'secretsKey',
  'secretsKeyPrevious',
  'SECRETS_KEY',
  'SECRETS_KEY_PREVIOUS',
  'ADMIN_TOKEN',
];

/** The root logger of a service: pino JSON on stdout (or the given destination). */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
