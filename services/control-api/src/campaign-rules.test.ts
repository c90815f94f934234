import { ALWAYS_OPEN } from '@metronome/core';
import { campaignProblems, mediaRefs, normaliseSchedule, type CampaignDraft } from './campaign-rules.js';

const NOW = new Date('2030-01-16T03:00:00Z');
const good: CampaignDraft = {
  timezone: 'Asia/Kuala_Lumpur',
  schedule: { type: 'interval', everySeconds: 300 },
  deliveryWindow: { start: '06:00', end: '18:00' },
  messages: [{ type: 'text', text: 'hi' }],
  targets: ['a', 'b'],
  audienceIds: [],
};
const fieldsOf = (draft: Partial<CampaignDraft>, min = 60) => campaignProblems({ ...good, ...draft }, min, NOW).map((p) => p.field);

describe('campaignProblems', () => {
  test('a sound campaign has none; a window crossing midnight is sound', () => {
    expect(campaignProblems(good, 60, NOW)).toEqual([]);
    expect(fieldsOf({ deliveryWindow: { start: '22:00', end: '06:00' } })).toEqual([]);
    expect(fieldsOf({ deliveryWindow: ALWAYS_OPEN })).toEqual([]);
  });

  test('names the field of each problem', () => {
    expect(fieldsOf({ timezone: 'Europe/Atlantis' })).toEqual(['timezone']);
    expect(fieldsOf({ deliveryWindow: { start: '06:00', end: '06:00' } })).toEqual(['deliveryWindow']);
    expect(fieldsOf({ deliveryWindow: { start: '24:00', end: '06:00' } })).toEqual(['deliveryWindow.start']);
    expect(fieldsOf({ deliveryWindow: { start: '06:00', end: '25:00' } })).toEqual(['deliveryWindow.end']);
    expect(fieldsOf({ schedule: { type: 'interval', everySeconds: 30 } })).toEqual(['schedule.everySeconds']);
    expect(fieldsOf({ schedule: { type: 'interval', everySeconds: 30 } }, 10)).toEqual([]);
    expect(fieldsOf({ schedule: { type: 'cron', expression: '61 * * * *' } })).toEqual(['schedule.expression']);
    expect(fieldsOf({ schedule: { type: 'cron', expression: '* * * * * *' } })).toEqual(['schedule.expression']);
    expect(fieldsOf({ schedule: { type: 'cron', expression: '*/1 * * * *' } }, 300)).toEqual(['schedule.expression']);
    expect(fieldsOf({ schedule: { type: 'cron', expression: '*/5 * * * *' } }, 300)).toEqual([]);
    expect(fieldsOf({ targets: ['a', 'b', 'a'] })).toEqual(['targets']);
    expect(fieldsOf({ targets: [] })).toEqual(['targets']);
    expect(fieldsOf({ targets: [], audienceIds: ['x'] })).toEqual([]);
    expect(fieldsOf({ audienceIds: ['x', 'y', 'x'] })).toEqual(['audienceIds.2']);
  });

  test('a cron is not judged against an unknown zone (only the zone is reported)', () => {
    expect(fieldsOf({ timezone: 'Nowhere', schedule: { type: 'cron', expression: '0 9 * * *' } })).toEqual(['timezone']);
  });

  test('repeated targets are quoted in the message', () => {
    const [problem] = campaignProblems({ ...good, targets: ['x', 'y', 'x', 'y', 'z'] }, 60, NOW);
    expect(problem?.message).toContain('"x", "y"');
  });
});

describe('normaliseSchedule', () => {
  test('instants become UTC and keys take one order, so stored and sent schedules compare equal', () => {
    expect(normaliseSchedule({ type: 'once', at: '2030-01-01T08:00:00+08:00' })).toEqual({ type: 'once', at: '2030-01-01T00:00:00.000Z' });
    const fromJsonb = JSON.parse('{"startAt":"2030-01-01T00:00:00.000Z","type":"interval","everySeconds":60}');
    expect(JSON.stringify(normaliseSchedule(fromJsonb))).toBe(
      JSON.stringify(normaliseSchedule({ type: 'interval', everySeconds: 60, startAt: '2030-01-01T08:00:00+08:00' })),
    );
  });
});

test('mediaRefs names each media part by its index', () => {
  expect(
    mediaRefs([
      { type: 'text', text: 'a' },
      { type: 'media', mediaId: 'm1' },
      { type: 'media', mediaId: 'm2', caption: 'c' },
    ]),
  ).toEqual([
    { mediaId: 'm1', field: 'messages.1.mediaId' },
    { mediaId: 'm2', field: 'messages.2.mediaId' },
  ]);
});
