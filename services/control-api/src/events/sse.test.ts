import { formatAccountEvent, formatDirectoryEvent, formatRunEvent, parseLastEventId } from './sse.js';

test('a run event is one SSE frame whose data is the contract payload on one line', () => {
  const frame = formatRunEvent({
    id: 42,
    tenantId: 't',
    runId: 'r',
    campaignId: 'c',
    status: 'paused',
    counts: { total: 2, pending: 1, inFlight: 0, sent: 1, failed: 0, skipped: 0, unknown: 0 },
    title: 'Reminder paused',
    body: 'line one\nline two',
  });
  const lines = frame.split('\n');
  expect(lines.slice(0, 2)).toEqual(['id: 42', 'event: run']);
  expect(frame.endsWith('\n\n')).toBe(true);
  expect(lines.filter((l) => l.startsWith('data: '))).toHaveLength(1);
  const data = JSON.parse(lines[2]!.slice('data: '.length));
  expect(data).toEqual({ runId: 'r', campaignId: 'c', status: 'paused', counts: expect.any(Object), title: 'Reminder paused', body: 'line one\nline two' });
  expect(data).not.toHaveProperty('tenantId');
});

test('a directory event has no id (not replayed), and its data names the account, never the tenant', () => {
  const syncing = formatDirectoryEvent({ tenantId: 't', accountId: 'a', status: 'syncing', synced: 200, size: 0 });
  expect(syncing).toBe('event: directory\ndata: {"accountId":"a","status":"syncing","synced":200,"size":0,"until":null,"reason":null}\n\n');
  const backingOff = formatDirectoryEvent({
    tenantId: 't',
    accountId: 'a',
    status: 'backing_off',
    synced: 0,
    size: 60,
    until: '2026-01-01T00:00:00.000Z',
    reason: 'rate-overlimit',
  });
  expect(JSON.parse(backingOff.split('\n')[1]!.slice('data: '.length))).toEqual({
    accountId: 'a',
    status: 'backing_off',
    synced: 0,
    size: 60,
    until: '2026-01-01T00:00:00.000Z',
    reason: 'rate-overlimit',
  });
});

test('Last-Event-ID is a non-negative integer or ignored', () => {
  expect(parseLastEventId('17')).toBe(17);
  expect(parseLastEventId(' 17 ')).toBe(17);
  expect(parseLastEventId(undefined)).toBeNull();
  expect(parseLastEventId('-1')).toBeNull();
  expect(parseLastEventId('1e3')).toBeNull();
  expect(parseLastEventId(['5', '6'])).toBe(5);
});

test('an account event carries reason and until when the account begins cooling, and only then', () => {
  const base = { tenantId: 't', accountId: 'a' };
  expect(formatAccountEvent({ ...base, status: 'cooling', reason: 'flood_waits', until: '2026-01-01T10:30:00.000Z' })).toBe(
    'event: account\ndata: {"accountId":"a","status":"cooling","reason":"flood_waits","until":"2026-01-01T10:30:00.000Z"}\n\n',
  );
  expect(formatAccountEvent({ ...base, status: 'active' })).toBe('event: account\ndata: {"accountId":"a","status":"active"}\n\n');
});
