// Composition root: config from the environment, the app, listen, and a clean stop on signals.
import { ConfigError } from '@metronome/config';
import { listeningAt, stopOnSignals } from '@metronome/observability';
import { pino } from 'pino';
import { buildSandbox } from './app.js';
import { loadConfig } from './config.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
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
  const app = await buildSandbox({ config, logger, receiptsUrl: config.receiptsUrl ?? null });
  await app.listen({ port: config.port, host: config.host });
  stopOnSignals('sandbox', logger, 'sandbox stopping', () => app.close(), process, config.stopDeadlineMs);
  // Listening is announced once SIGTERM is handled: a signal right after it must drain, not kill.
  const { url, port } = listeningAt(app.server.address(), config.host, config.port);
  logger.info({ url, port, limits: config.limits, seed: config.seed }, 'sandbox listening');
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
