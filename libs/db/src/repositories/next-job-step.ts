import { sql, type RawBuilder } from 'kysely';

/** A run's job step after a hand-over. */
export interface JobStep {
  jobSeq: number;
  jobId: string;
}

/**
 * SET items moving the run to its next job step: `job_seq` + 1 and `job_id` as libs/queue runJobId makes
 * it (run-hand-over.test.ts checks both agree), both from the old row.
 */
export function nextJobStep(alias: 'r'): RawBuilder<unknown> {
  return sql.raw(`job_seq = ${alias}.job_seq + 1, job_id = 'run-' || ${alias}.id || '-' || (${alias}.job_seq + 1)`);
}
