import { drainMs, loadConfig } from './config.js';

describe('STOP_DEADLINE_MS', () => {
  test('9 s unless set; a value out of 3000–600000 or not an integer is refused by name', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).STOP_DEADLINE_MS).toBe(9_000);
    expect(loadConfig({ NODE_ENV: 'development', STOP_DEADLINE_MS: '25000' }).STOP_DEADLINE_MS).toBe(25_000);
    for (const bad of ['2999', '600001', '9s', '9000.5'])
      expect(() => loadConfig({ NODE_ENV: 'development', STOP_DEADLINE_MS: bad })).toThrow(/STOP_DEADLINE_MS/);
  });
});

describe('drainMs', () => {
  test('3 s at the default 9 s, as before the deadline could be set', () => {
    expect(drainMs(9_000)).toBe(3_000);
  });

  test('a longer deadline goes to the drain whole: the later steps keep the 6 s they have at 9 s', () => {
    expect(drainMs(20_000)).toBe(14_000);
    expect(drainMs(25_000)).toBe(19_000);
    expect(drainMs(600_000) + 6_000).toBe(600_000);
  });

  test('a shorter deadline shrinks the drain in proportion, never past what the deadline gives', () => {
    expect(drainMs(3_000)).toBe(1_000);
    expect(drainMs(6_000)).toBe(2_000);
    for (let deadline = 3_000; deadline < 600_000; deadline += 500) expect(drainMs(deadline + 500)).toBeGreaterThan(drainMs(deadline));
  });
});
