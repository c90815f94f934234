import { ConfigError, parseEnv, secretsKey, z } from '@metronome/config';
import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { createDb } from './connection.js';
import { redactUrl } from './migrate.js';
import { SealedSecretsRepository } from './repositories/sealed-secrets-repository.js';
import { WebhookRepository } from './repositories/webhook-repository.js';
import { resealSecrets } from './reseal.js';
import { resealWebhookSecrets } from './webhook-reseal.js';

// `npm run reseal`: re-seals every stored secret under SECRETS_KEY after a rotation (old key in SECRETS_KEY_PREVIOUS).
// Safe while the services run, and to run again.
const env = (() => {
  try {
    const e = parseEnv(
      z
        .object({
          DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/metronome'),
          NODE_ENV: z.string().optional(),
          SECRETS_KEY: secretsKey,
          SECRETS_KEY_PREVIOUS: secretsKey,
        })
        .superRefine((v, ctx) => {
          if (!v.SECRETS_KEY && v.NODE_ENV !== 'development')
            ctx.addIssue({ code: 'custom', path: ['SECRETS_KEY'], message: 'required unless NODE_ENV=development (openssl rand -hex 32)' });
        }),
      process.env,
    );
    return e;
  } catch (error) {
    console.error(`reseal: ${error instanceof ConfigError ? error.message : String(error)}`);
    process.exit(2);
  }
})();

const keys = [env.SECRETS_KEY ?? DEVELOPMENT_SECRETS_KEY, ...(env.SECRETS_KEY_PREVIOUS ? [env.SECRETS_KEY_PREVIOUS] : [])];
const db = createDb({ url: env.DATABASE_URL, max: 2, applicationName: 'metronome-reseal' });
try {
  const report = await resealSecrets(new SealedSecretsRepository(db), keys);
  console.log(
    `reseal: ${redactUrl(env.DATABASE_URL)} — ${report.resealed.credentials} account credentials, ${report.resealed.proxies} account proxies and ${report.resealed.whatsappAuth} WhatsApp auth rows re-sealed under SECRETS_KEY` +
      (report.raced ? `; ${report.raced} changed meanwhile and were left as written` : ''),
  );
  if (report.unreadable.length > 0) {
    const accounts = [...new Set(report.unreadable.map((u) => u.accountId))];
    console.error(
      `reseal: ${accounts.length} account(s) hold secrets sealed with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS (${accounts.slice(0, 10).join(', ')}${accounts.length > 10 ? ', …' : ''}): set SECRETS_KEY_PREVIOUS to the key they were sealed with and run again.`,
    );
    process.exitCode = 1;
  }
  const hooks = await resealWebhookSecrets(new WebhookRepository(db), keys);
  console.log(
    `reseal: ${hooks.resealed} webhook secrets re-sealed under SECRETS_KEY${hooks.raced ? `; ${hooks.raced} changed meanwhile and were left as written` : ''}`,
  );
  if (hooks.unreadable.length > 0) {
    console.error(
      `reseal: ${hooks.unreadable.length} webhook(s) hold secrets sealed with a key that is neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS (${hooks.unreadable.slice(0, 10).join(', ')}${hooks.unreadable.length > 10 ? ', …' : ''}): set SECRETS_KEY_PREVIOUS to the key they were sealed with and run again.`,
    );
    process.exitCode = 1;
  }
} catch (error) {
  console.error(`reseal: ${redactUrl(env.DATABASE_URL)} — ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
