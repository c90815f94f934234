import { deactivationReason, evaluationProblem, type TickTransaction } from '@metronome/db';

/** PostgreSQL refused the data itself (SQLSTATE class 22 or 23): a row is at fault, to set aside so the tick goes on. */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23][0-9A-Z]{3}$/.test(code);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The campaigns one tick sets aside, each with its deactivation reason. In careful mode each batch runs under a
 * savepoint and is halved where it fails until the failing rows are alone (O(k log n) statements, failures only).
 */
export class Quarantine {
  readonly reasons = new Map<string, string>();

  constructor(
    private readonly tx: TickTransaction,
    readonly careful: boolean,
  ) {}

  has(campaignId: string): boolean {
    return this.reasons.has(campaignId);
  }

  add(campaignId: string, problem: string): void {
    if (!this.reasons.has(campaignId)) this.reasons.set(campaignId, deactivationReason(problem));
  }

  /** `evaluate()`'s value, or undefined after setting the campaign aside because it threw. */
  attempt<T>(campaignId: string, evaluate: () => T): T | undefined {
    try {
      return evaluate();
    } catch (error) {
      this.add(campaignId, evaluationProblem(error));
      return undefined;
    }
  }

  async batch<T, R>(items: T[], campaignOf: (item: T) => string, statement: (items: T[]) => Promise<R[]>): Promise<R[]> {
    const live = items.filter((item) => !this.reasons.has(campaignOf(item)));
    if (live.length === 0) return [];
    if (!this.careful) return statement(live);
    return this.bisect(live, campaignOf, statement);
  }

  private async bisect<T, R>(items: T[], campaignOf: (item: T) => string, statement: (items: T[]) => Promise<R[]>): Promise<R[]> {
    const result = await this.tx.guarded(() => statement(items));
    if (result.ok) return result.value;
    if (!isDataError(result.error)) throw result.error;
    if (items.length === 1) {
      this.add(campaignOf(items[0]!), `the database refused what it would write (${messageOf(result.error)})`);
      return [];
    }
    const half = Math.ceil(items.length / 2);
    const first = await this.bisect(items.slice(0, half), campaignOf, statement);
    return [...first, ...(await this.bisect(items.slice(half), campaignOf, statement))];
  }
}
