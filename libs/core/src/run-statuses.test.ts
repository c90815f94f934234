import { FINISHED_RUN_STATUSES, LIVE_RUN_STATUSES, OPEN_RUN_STATUSES, RUN_STATUSES } from './run-statuses.js';

test('the open runs are live; live and finished runs split every status between them', () => {
  expect(OPEN_RUN_STATUSES.every((s) => (LIVE_RUN_STATUSES as readonly string[]).includes(s))).toBe(true);
  expect(LIVE_RUN_STATUSES.filter((s) => (FINISHED_RUN_STATUSES as readonly string[]).includes(s))).toEqual([]);
  expect([...LIVE_RUN_STATUSES, ...FINISHED_RUN_STATUSES].sort()).toEqual([...RUN_STATUSES].sort());
});
