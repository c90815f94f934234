import { cronFields, cronGapProblem, cronProblem } from './cron-rules.js';

const NOW = new Date('2030-01-16T03:00:00Z');

describe('cronProblem: exactly five fields', () => {
  test.each([
    ['0 9 * * 1-5', false],
    ['*/5 * * * *', false],
    ['  0   9 * * *  ', false],
    ['@hourly', false],
    ['@DAILY', false],
    ['* * * * * *', true], // seconds
    ['0 0 9 * * 1-5', true],
    ['0 0 9 * * * 2031', true], // seconds and years
    ['* * * *', true],
    ['@reboot', true],
    ['not a cron', true],
    ['61 * * * *', true],
    ['0 0 30 2 *', true], // never matches
  ])('%s', (expression, bad) => {
    expect(cronProblem(expression, 'UTC', NOW) !== null).toBe(bad);
  });

  // Names every plain object inherits: looked up as nicknames, they must find nothing.
  test.each([...Object.getOwnPropertyNames(Object.prototype), '@__proto__', '__PROTO__', 'Constructor', 'prototype'])(
    '%s is a problem, not a throw',
    (expression) => {
      expect(cronFields(expression)).toBeNull();
      expect(cronProblem(expression, 'UTC', NOW)).toMatch(/five fields/);
      expect(cronGapProblem(expression, 'UTC', 300, NOW)).toBeNull();
    },
  );

  test('nicknames stand for their five fields', () => {
    expect(cronFields('@weekly')).toEqual(['0', '0', '*', '*', '0']);
    expect(cronFields('* * * * * *')).toBeNull();
  });
});

describe('cronGapProblem: no two occurrences closer than the minimum', () => {
  const gap = (expression: string, min: number, timezone = 'UTC') => cronGapProblem(expression, timezone, min, NOW);

  test('a regular step is measured against the minimum, equal is enough', () => {
    expect(gap('*/1 * * * *', 300)).not.toBeNull();
    expect(gap('*/4 * * * *', 300)).not.toBeNull();
    expect(gap('*/5 * * * *', 300)).toBeNull();
    expect(gap('*/5 * * * *', 301)).not.toBeNull();
    expect(gap('0 * * * *', 3600)).toBeNull();
    expect(gap('@hourly', 3601)).not.toBeNull();
  });

  test('with a minimum of a minute or less every five-field expression passes', () => {
    expect(gap('* * * * *', 60)).toBeNull();
    expect(gap('0,1 * * * *', 1)).toBeNull();
  });

  test('irregular lists are measured at their closest pair, within the hour and across hours', () => {
    expect(gap('0,1 * * * *', 300)).toMatch(/60 s/);
    expect(gap('0,30 * * * *', 1800)).toBeNull();
    // 00:55 and 01:05 are ten minutes apart though both minutes are 55 apart within the hour
    expect(gap('5,55 * * * *', 1200)).toMatch(/600 s/);
    expect(gap('0 9,10 * * *', 3600)).toBeNull();
    expect(gap('0 9,10 * * *', 3601)).not.toBeNull();
  });

  test('across midnight, when consecutive days both match', () => {
    expect(gap('0,59 0,23 * * *', 120)).toMatch(/60 s/); // 23:59 then 00:00
    // Mondays and Wednesdays only: 23:59 on Monday to 00:00 on Wednesday is a day and a minute
    expect(gap('0,59 0,23 * * 1,3', 120)).toBeNull();
    expect(gap('0 0,23 * * 1,3', 3600)).toBeNull(); // 23:00 Monday to 00:00 Wednesday: 25 h
    expect(gap('0 0,23 * * *', 3601)).not.toBeNull(); // 23:00 to 00:00 the next day
    expect(gap('0 0 * * *', 86_400)).toBeNull();
    expect(gap('0 0 * * 1', 7 * 86_400)).toBeNull();
    expect(gap('0 0 * * 1,2', 2 * 86_400)).not.toBeNull();
    expect(gap('0 0 1 * *', 28 * 86_400)).toBeNull(); // February is the shortest month
    expect(gap('0 0 1 * *', 29 * 86_400)).not.toBeNull();
  });

  test('a daylight-saving change that repeats an hour brings nothing closer: a repeated time fires once', () => {
    // 01:40 EDT, and the repeated 01:00 and 01:40 EST do not fire again (CONTRACT's DST rule)
    expect(gap('0,40 1 * * *', 1800, 'America/New_York')).toBeNull();
    expect(gap('0,40 1 * * *', 2401, 'America/New_York')).toMatch(/2400 s/); // 01:00 to 01:40, any day
  });

  test('times on both sides of a skipped hour come closer on the real clock', () => {
    // 01:58 EST, then 03:02 EDT 4 minutes later (2030-03-10 in New York); 64 minutes elsewhere
    expect(gap('2,58 1,3 * * *', 300, 'America/New_York')).toMatch(/240 s/);
    expect(gap('2,58 1,3 * * *', 300, 'UTC')).toBeNull();
    // a 30-minute shift (Lord Howe, 02:00 → 02:30): 01:50 and 02:50 are 30 minutes apart that day
    expect(gap('50 1,2 * * *', 3000, 'Australia/Lord_Howe')).toMatch(/1800 s/);
    expect(gap('50 1,2 * * *', 3000, 'UTC')).toBeNull();
  });

  test('a daylight-saving change that skips an hour brings the hours around it closer', () => {
    // 01:00 and 03:00 are an hour apart on the day 02:00 does not exist (2030-03-10 in New York)
    expect(gap('0 1,3 * * *', 7200, 'America/New_York')).toMatch(/3600 s/);
    expect(gap('0 1,3 * * *', 7200, 'Asia/Kuala_Lumpur')).toBeNull();
  });

  test('is quick enough to run on every request', () => {
    const started = performance.now();
    for (const expression of ['*/2 * * * *', '0,40 1 * * *', '0 0,23 * * 1,3', '*/5 8-18 * * 1-5']) gap(expression, 120, 'America/New_York');
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
