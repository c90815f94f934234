import { CampaignProblem } from '../campaign-check.js';
import type { DueCampaign } from './due-campaigns.js';
import { planDueRun } from './run-creation.js';

// The tick and the API's instant start plan a due campaign with the same function: a run with
// its campaign's advance, null for another plan, a CampaignProblem for what the tick sets aside.

const NOW = new Date('2030-01-01T12:00:00Z');
const ids = { runId: '00000000-0000-4000-8000-000000000001', jobId: 'run-00000000-0000-4000-8000-000000000001-0' };
const due = (over: Partial<DueCampaign> = {}): DueCampaign => ({
  id: '00000000-0000-4000-8000-0000000000c1',
  tenantId: '00000000-0000-4000-8000-0000000000b1',
  accountId: '00000000-0000-4000-8000-0000000000a1',
  name: 'c',
  timezone: 'UTC',
  schedule: { type: 'interval', everySeconds: 3600 },
  windowStart: '00:00',
  windowEnd: '23:59',
  messages: [{ type: 'text', text: 'hi' }],
  nextRunAt: NOW,
  lastScheduledAt: null,
  catchUpPolicy: 'latest',
  catchUpMaxLatenessSeconds: null,
  catchUpThrough: null,
  ...over,
});

test('a due occurrence becomes its run, the campaign moved to the next one', () => {
  const planned = planDueRun(due(), NOW, 0, ids);
  expect(planned?.run).toMatchObject({ id: ids.runId, jobId: ids.jobId, trigger: 'schedule', scheduledAt: NOW });
  expect(planned?.advance).toMatchObject({ nextRunAt: new Date('2030-01-01T13:00:00Z'), active: true });
  expect(planned?.plan.occurrence).toEqual(NOW);
});

test('an occurrence outside its window is no run here: the tick moves it', () => {
  expect(planDueRun(due({ windowStart: '14:00', windowEnd: '15:00' }), NOW, 0, ids)).toBeNull();
});

test.each([
  ['a timezone', { timezone: 'Mars/Olympus' }, 'its timezone "Mars/Olympus" is not an IANA zone'],
  ['no message parts', { messages: [] }, 'it has no message parts'],
  [
    'a cron expression that cannot be evaluated',
    { schedule: { type: 'cron', expression: 'not a cron' } as DueCampaign['schedule'] },
    'evaluating its schedule',
  ],
])('%s the tick sets aside throws its CampaignProblem', (_, over, problem) => {
  let thrown: unknown;
  try {
    planDueRun(due(over), NOW, 0, ids);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(CampaignProblem);
  expect((thrown as CampaignProblem).problem).toContain(problem);
});
