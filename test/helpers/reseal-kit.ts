// What the two key-rotation tests share (account credentials and WhatsApp auth in
// integration/reseal.test.ts, webhook secrets in api/webhooks-reseal.test.ts): the keys of a
// rotation, and `npm run reseal` run as a process against a test database.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A rotation: the key SECRETS_KEY was (OLD), the key it is now (NEW), and one neither is (STRANGER). */
export const rotationKeys = () => ({ OLD: randomBytes(32), NEW: randomBytes(32), STRANGER: randomBytes(32) });

/** The environment `npm run reseal` gets after the rotation, on `databaseUrl`. */
export const resealEnv = (databaseUrl: string, keys: { OLD: Buffer; NEW: Buffer }): NodeJS.ProcessEnv => ({
  ...process.env,
  DATABASE_URL: databaseUrl,
  SECRETS_KEY: keys.NEW.toString('hex'),
  SECRETS_KEY_PREVIOUS: keys.OLD.toString('hex'),
  NODE_ENV: 'production',
});

/** `npm run reseal` as the script runs it (the build output); rejects when it exits non-zero. */
export const reseal = (env: NodeJS.ProcessEnv) => run('node', ['libs/db/dist/reseal-cli.js'], { env });

/** The same, expected to fail: its exit code and stderr, or null if it succeeded. */
export const resealFailure = (env: NodeJS.ProcessEnv) =>
  reseal(env).then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
