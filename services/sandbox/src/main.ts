// Composition root: config from the environment, the app, listen, and a clean stop on signals.
import { ConfigError } from '@metronome/config';
import { pino } from 'pino';
import { buildSandbox } from './app.js';
import { loadConfig } from './config.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sandbox: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = pino({ level: config.logLevel, base: { service: 'sandbox' } });
  const app = await buildSandbox({ config, logger });
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'sandbox stopping');
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'sandbox close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Listening is announced once SIGTERM is handled: a signal right after it must drain, not kill.
  logger.info({ url: `http://${host}:${port}`, port, limits: config.limits, seed: config.seed }, 'sandbox listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
