import { sql, type Kysely } from 'kysely';

/** What `/readyz` answers: `ok` (200, else 503), each check's verdict, and why when not ok. */
export type Readiness = { ok: boolean; reason?: string } & Record<string, boolean | string | undefined>;

/** One dependency's check, bounded in time by itself: null when ready, else why not. */
export type ReadinessCheck = () => Promise<string | null>;

/** Runs the named checks at once; the answer names each and joins the reasons; a check that throws is not ready. */
export async function readinessOf(checks: Record<string, ReadinessCheck>): Promise<Readiness> {
  const names = Object.keys(checks);
  const reasons = await Promise.all(
    names.map((name) =>
      checks[name]!().then(
        (reason) => (reason === null ? null : `${name}: ${reason}`),
        (error: Error) => `${name}: ${error.message}`,
      ),
    ),
  );
  const answer: Readiness = { ok: reasons.every((r) => r === null) };
  names.forEach((name, i) => (answer[name] = reasons[i] === null));
  const why = reasons.filter((r): r is string => r !== null);
  if (why.length) answer.reason = why.join('; ');
  return answer;
}

/** PostgreSQL answers a `select 1` within `timeoutMs`. */
export function postgresAnswers<DB>(db: Kysely<DB>, timeoutMs: number): ReadinessCheck {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((done) => (timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs)));
    const answered = sql`select 1`.execute(db).then(() => null);
    return Promise.race([answered, late]).finally(() => clearTimeout(timer));
  };
}
