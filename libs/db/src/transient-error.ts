import pg from 'pg';

// SQLSTATE classes for "away, try again": connection, resources, shutdown, serialization, deadlock.
const TRANSIENT_SQLSTATE = /^(08|53|57P|40001|40P01)/;

/** Whether a failed statement may succeed if tried again; client-side errors (no SQLSTATE) are transient. */
export function isTransientDbError(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return TRANSIENT_SQLSTATE.test(error.code ?? '');
  return Object.prototype.toString.call(error) === '[object Error]';
}
