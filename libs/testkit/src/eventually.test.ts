import { eventually, GiveUp } from './eventually.js';

test('returns the first truthy value, retrying falsy answers and thrown errors', async () => {
  let calls = 0;
  const value = await eventually(
    'the third call',
    async () => {
      calls++;
      if (calls === 1) throw new Error('not yet');
      return calls === 3 ? 'done' : false;
    },
    1_000,
    1,
  );
  expect(value).toBe('done');
  expect(calls).toBe(3);
});

test('a timeout names what it waited for and the last error', async () => {
  await expect(
    eventually(
      'never',
      async () => {
        throw new Error('still down');
      },
      20,
      5,
    ),
  ).rejects.toThrow('timed out waiting for never: Error: still down');
});

test('GiveUp ends the wait at once, with its own message', async () => {
  let calls = 0;
  const started = Date.now();
  await expect(
    eventually(
      'a dead process',
      async () => {
        calls++;
        throw new GiveUp('it exited');
      },
      5_000,
      1,
    ),
  ).rejects.toThrow(/^it exited$/);
  expect(calls).toBe(1);
  expect(Date.now() - started).toBeLessThan(1_000);
});
