import { sql, type RawBuilder } from 'kysely';

/** A run's job step after a hand-over: the `job_seq` it moved to and the job id derived from it. */
export interface JobStep {
  jobSeq: number;
  jobId: string;
}

/**
 * The SET items that hand the run aliased `alias` to its next job step: `job_seq` one further
 * and `job_id` derived from (id, job_seq) in the same statement, so no caller builds the id.
 * The id is the string runJobId (libs/queue) makes, `run-<run id>-<seq>`, which the queue
 * uses as the BullMQ job id; test/integration/run-hand-over.test.ts checks that both agree.
 * In an UPDATE every right-hand side reads the row as it was, so both use the old job_seq.
 */
export function nextJobStep(alias: 'r'): RawBuilder<unknown> {
  // `alias` is a code constant, never input: raw is safe here.
  return sql.raw(`job_seq = ${alias}.job_seq + 1, job_id = 'run-' || ${alias}.id || '-' || (${alias}.job_seq + 1)`);
}
