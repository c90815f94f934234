import type { ReceiptInput, ReceiptOutcome, ReceiptSubmission } from '@metronome/db';
import { ReceiptIngest } from './receipt-ingest.js';

// The receipts route's group commit: posts that come while a write runs go together in the next.

const receipt = (messageId: string): ReceiptInput => ({ messageId, chatId: 'c', status: 'delivered', at: new Date(0) });
const post = (accountId: string, ...ids: string[]): ReceiptSubmission => ({ accountId, receipts: ids.map(receipt) });

/** A write that waits until the test lets it finish; each outcome says which receipts it saw. */
function gatedWriter() {
  const writes: ReceiptSubmission[][] = [];
  const gates: ((fail?: Error) => void)[] = [];
  const write = (submissions: ReceiptSubmission[]) =>
    new Promise<ReceiptOutcome[]>((resolve, reject) => {
      writes.push(submissions);
      gates.push((fail) =>
        fail ? reject(fail) : resolve(submissions.map((s) => ({ matched: s.receipts.map((r) => r.messageId.startsWith('m')), changed: [] }))),
      );
    });
  return { writes, release: (fail?: Error) => gates.shift()!(fail), write };
}

const settle = () => new Promise((r) => setImmediate(r));

test('an idle ingest writes a post at once; posts that come while it writes go together next, each answered with its own outcome', async () => {
  const w = gatedWriter();
  const ingest = new ReceiptIngest({ write: w.write });
  const first = ingest.submit(post('a', 'm1'));
  expect(w.writes).toHaveLength(1);
  const second = ingest.submit(post('b', 'm2', 'x3'));
  const third = ingest.submit(post('a', 'x4'));
  await settle();
  expect(w.writes).toHaveLength(1); // the two wait for the first write
  w.release();
  expect(await first).toEqual({ matched: [true], changed: [] });
  await settle();
  expect(w.writes).toHaveLength(2);
  expect(w.writes[1]).toEqual([post('b', 'm2', 'x3'), post('a', 'x4')]);
  w.release();
  expect(await second).toEqual({ matched: [true, false], changed: [] });
  expect(await third).toEqual({ matched: [false], changed: [] });
  await ingest.idle();
  expect(w.writes).toHaveLength(2);
});

test('a failed write fails its own posts only; one write takes at most maxReceipts, a larger post alone', async () => {
  const w = gatedWriter();
  const ingest = new ReceiptIngest({ write: w.write, maxReceipts: 3 });
  const failing = ingest.submit(post('a', 'm1'));
  const big = ingest.submit(post('b', 'm1', 'm2', 'm3', 'm4'));
  const next = ingest.submit(post('c', 'm5', 'm6'));
  const last = ingest.submit(post('c', 'm7'));
  w.release(new Error('deadlock detected'));
  await expect(failing).rejects.toThrow('deadlock detected');
  await settle();
  expect(w.writes[1]).toEqual([post('b', 'm1', 'm2', 'm3', 'm4')]);
  w.release();
  expect((await big).matched).toEqual([true, true, true, true]);
  await settle();
  expect(w.writes[2]).toEqual([post('c', 'm5', 'm6'), post('c', 'm7')]);
  w.release();
  expect((await next).matched).toEqual([true, true]);
  expect((await last).matched).toEqual([true]);
});
