import { createSleeper } from './sleeper.js';

describe('createSleeper', () => {
  it('resolves a zero sleep at once', async () => {
    await expect(createSleeper().sleep(0)).resolves.toBeUndefined();
  });

  it('wakeAll ends pending sleeps early (so close is not held by a hang)', async () => {
    const sleeper = createSleeper();
    const long = sleeper.sleep(600_000);
    let done = false;
    void long.then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    sleeper.wakeAll();
    await long;
    expect(done).toBe(true);
  });
});
