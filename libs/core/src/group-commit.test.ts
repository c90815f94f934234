import { GroupCommit } from './group-commit.js';

/** A call that records each batch and answers when released. */
function gate() {
  const calls: { key: string; count: number; release: (results: string[]) => void; fail: (e: Error) => void }[] = [];
  const commit = new GroupCommit<string, string>(
    (key, requests) =>
      new Promise<string[]>((resolve, reject) => {
        calls.push({ key, count: requests.length, release: resolve, fail: reject });
      }),
  );
  return { commit, calls };
}

const tick = () => new Promise((r) => setImmediate(r));

test('a lone request goes at once; those made while a call is out go together in the next', async () => {
  const { commit, calls } = gate();
  const first = commit.ask('k');
  expect(calls.map((c) => c.count)).toEqual([1]);
  const later = [commit.ask('k'), commit.ask('k'), commit.ask('k')];
  await tick();
  expect(calls.length).toBe(1);
  calls[0]!.release(['a']);
  expect(await first).toBe('a');
  await tick();
  expect(calls.map((c) => c.count)).toEqual([1, 3]);
  calls[1]!.release(['b', 'c', 'd']);
  expect(await Promise.all(later)).toEqual(['b', 'c', 'd']);
});

test('requests of another key never share a call', async () => {
  const { commit, calls } = gate();
  const a0 = commit.ask('a');
  const mixed = [commit.ask('b'), commit.ask('a'), commit.ask('b')];
  calls[0]!.release(['a0']);
  await a0;
  await tick();
  expect(calls.map((c) => [c.key, c.count])).toEqual([
    ['a', 1],
    ['b', 2],
  ]);
  calls[1]!.release(['b1', 'b2']);
  await tick();
  expect(calls.map((c) => [c.key, c.count])).toEqual([
    ['a', 1],
    ['b', 2],
    ['a', 1],
  ]);
  calls[2]!.release(['a1']);
  expect(await Promise.all(mixed)).toEqual(['b1', 'a1', 'b2']);
});

test('requests a call leaves unanswered ask again at once, first in line', async () => {
  const { commit, calls } = gate();
  const first = commit.ask('k');
  const batch = [commit.ask('k'), commit.ask('k'), commit.ask('k')];
  calls[0]!.release(['x']);
  await first;
  await tick();
  const latecomer = commit.ask('k');
  calls[1]!.release(['y']);
  await tick();
  // the two left over and the latecomer: one call of three, the left-over ones first
  expect(calls.map((c) => c.count)).toEqual([1, 3, 3]);
  calls[2]!.release(['z1', 'z2', 'z3']);
  expect(await Promise.all([...batch, latecomer])).toEqual(['y', 'z1', 'z2', 'z3']);
});

test('a failed call fails every request it carried, and the next ones still go', async () => {
  const { commit, calls } = gate();
  const first = commit.ask('k');
  const batch = [commit.ask('k'), commit.ask('k')];
  calls[0]!.fail(new Error('down'));
  await expect(first).rejects.toThrow('down');
  await tick();
  calls[1]!.release(['p', 'q']);
  expect(await Promise.all(batch)).toEqual(['p', 'q']);
  // a call that answers nothing fails its requests instead of asking again for ever
  const none = commit.ask('k');
  await tick();
  calls[2]!.release([]);
  await expect(none).rejects.toThrow('answered none');
});

test('what each request carries reaches the call, in the order they asked', async () => {
  const seen: number[][] = [];
  const commit = new GroupCommit<string, number, number>(async (_key, requests) => {
    seen.push(requests);
    return requests.map((r) => r * 10);
  });
  const first = commit.ask('k', 1);
  const later = [commit.ask('k', 2), commit.ask('k', 3)];
  expect(await Promise.all([first, ...later])).toEqual([10, 20, 30]);
  expect(seen).toEqual([[1], [2, 3]]);
});

test('with room for several calls out, a request goes at once until they are all out; the rest then wait together', async () => {
  const calls: { requests: number[]; release: () => void }[] = [];
  const commit = new GroupCommit<string, number, number>(
    (_key, requests) => new Promise((resolve) => calls.push({ requests, release: () => resolve(requests) })),
    2,
  );
  const asked = [1, 2, 3, 4].map((n) => commit.ask('k', n));
  await tick();
  expect(calls.map((c) => c.requests)).toEqual([[1], [2]]);
  calls[1]!.release();
  await tick();
  expect(calls.map((c) => c.requests)).toEqual([[1], [2], [3, 4]]);
  calls[0]!.release();
  calls[2]!.release();
  expect(await Promise.all(asked)).toEqual([1, 2, 3, 4]);
});
