import pg from 'pg';

// SQLSTATE classes that say "the server or the connection is away, try again":
// 08 connection exception, 53 insufficient resources, 57P admin shutdown / crash / cannot
// connect now, 40001 serialization failure, 40P01 deadlock.
const TRANSIENT_SQLSTATE = /^(08|53|57P|40001|40P01)/;

/**
 * Whether a failed statement may succeed if tried again (the database restarting or away), as
 * opposed to one the server refused for what it said. Errors raised by the client itself (a
 * refused or dropped connection, a pool timeout) carry no SQLSTATE: they are transient.
 */
export function isTransientDbError(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) return TRANSIENT_SQLSTATE.test(error.code ?? '');
  // by tag, not instanceof: a socket error made by Node itself may come from another realm (a test VM)
  return Object.prototype.toString.call(error) === '[object Error]';
}
