import type { SendOutcome } from '@metronome/core';
import { Metrics } from '@metronome/observability';
import { subscribeMetrics } from './metrics-subscriber.js';
import { senderEvents, type SenderEvents } from './sender-events.js';

// Each event makes the metric change CONTRACT §6 names, read back from the registry.

const part = { runId: 'r1', accountId: 'a1', chatId: 'c1', partIndex: 0 };

function setup(): { events: SenderEvents; metrics: Metrics; value: (name: string, labels?: Record<string, string>) => Promise<number> } {
  const metrics = new Metrics('sender-test');
  const events = senderEvents();
  subscribeMetrics(events, metrics);
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const metric = await metrics.registry.getSingleMetric(name)!.get();
    const found = metric.values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
    return found?.value ?? 0;
  };
  return { events, metrics, value };
}

describe('subscribeMetrics', () => {
  const answers: [SendOutcome, string][] = [
    [{ kind: 'sent-last', messageId: 'm', partsSent: 1, latencyMs: 5 }, 'sent'],
    [{ kind: 'next-part', messageId: 'm', partsSent: 1 }, 'sent'],
    [{ kind: 'account-wait', until: 0, blockedUntil: 0, floodWait: true, code: 'flood_wait', retryAfterMs: 3000 }, 'retry'],
    [{ kind: 'chat-wait', until: 0, code: 'slow_mode', retryAfterMs: 2000 }, 'retry'],
    [{ kind: 'stop-account', releaseAt: 0, code: 'account_disconnected' }, 'retry'],
    [{ kind: 'retry', at: 0, attempts: 1, code: 'timeout', message: 'm' }, 'retry'],
    [{ kind: 'chat-moved', newChatId: 'c2', code: 'chat_migrated' }, 'retry'],
    [{ kind: 'fail', because: 'rejected', code: 'chat_not_found', message: 'm', suppress: false, attempts: 1 }, 'failed'],
    [{ kind: 'unknown', code: 'timeout', message: 'm' }, 'unknown'],
  ];
  test.each(answers)('send:result %j counts one metronome_sends_total{result=%s}', async (outcome, result) => {
    const { events, value } = setup();
    events.emit('send:result', { ...part, platform: 'telegram', outcome });
    expect(await value('metronome_sends_total', { platform: 'telegram', result })).toBe(1);
    const others = ['sent', 'retry', 'failed', 'unknown'].filter((r) => r !== result);
    for (const other of others) expect(await value('metronome_sends_total', { platform: 'telegram', result: other })).toBe(0);
  });

  test("send:result adds the platform's waits, by scope, in seconds", async () => {
    const { events, value } = setup();
    events.emit('send:result', {
      ...part,
      platform: 'telegram',
      outcome: { kind: 'account-wait', until: 0, blockedUntil: 0, floodWait: true, code: 'flood_wait', retryAfterMs: 3000 },
    });
    events.emit('send:result', { ...part, platform: 'telegram', outcome: { kind: 'chat-wait', until: 0, code: 'slow_mode', retryAfterMs: 2500 } });
    events.emit('send:result', { ...part, platform: 'telegram', outcome: { kind: 'retry', at: 0, attempts: 1, code: 'timeout', message: 'm' } });
    expect(await value('metronome_provider_wait_seconds_total', { scope: 'account' })).toBe(3);
    expect(await value('metronome_provider_wait_seconds_total', { scope: 'chat' })).toBe(2.5);
  });

  test('job:start observes the wait, job:outcome counts the outcome and observes the held time', async () => {
    const { events, value } = setup();
    events.emit('job:start', { jobId: 'j', waitMs: 250 });
    // a job added with a clock ahead of this one's: no negative wait
    events.emit('job:start', { jobId: 'j', waitMs: -40 });
    events.emit('job:outcome', { jobId: 'j', runId: 'r1', outcome: 'deferred', heldMs: 1500 });
    expect(await value('metronome_job_wait_seconds', { le: '0.25' })).toBe(2);
    expect(await value('metronome_job_wait_seconds', { le: '0.1' })).toBe(1);
    expect(await value('metronome_job_outcomes_total', { outcome: 'deferred' })).toBe(1);
    expect(await value('metronome_job_seconds', { le: '1' })).toBe(0);
    expect(await value('metronome_job_seconds', { le: '2' })).toBe(1);
  });

  test("run:first-send observes the run's start lag by trigger", async () => {
    const { events, value } = setup();
    events.emit('run:first-send', { runId: 'r1', trigger: 'schedule', lagMs: 400 });
    expect(await value('metronome_run_start_lag_seconds', { trigger: 'schedule', le: '0.25' })).toBe(0);
    expect(await value('metronome_run_start_lag_seconds', { trigger: 'schedule', le: '0.5' })).toBe(1);
  });

  test('account:cooling counts one cooling by platform and reason', async () => {
    const { events, value } = setup();
    events.emit('account:cooling', { accountId: 'a1', platform: 'whatsapp', reason: 'failures', until: 0, paceFactor: 0.5, words: 'w' });
    expect(await value('metronome_account_cooling_total', { platform: 'whatsapp', reason: 'failures' })).toBe(1);
  });

  test('directory:synced counts the sync by platform and status and observes its time; directory:failed counts a failed one', async () => {
    const { events, value } = setup();
    events.emit('directory:synced', { accountId: 'a1', platform: 'whatsapp', status: 'backing_off', size: 12, heldMs: 1500 });
    events.emit('directory:synced', { accountId: 'a2', platform: 'http', status: 'ok', size: 60, heldMs: 40 });
    events.emit('directory:failed', { accountId: 'a3', platform: 'http', error: new Error('bad key') });
    expect(await value('metronome_directory_syncs_total', { platform: 'whatsapp', status: 'backing_off' })).toBe(1);
    expect(await value('metronome_directory_syncs_total', { platform: 'http', status: 'ok' })).toBe(1);
    expect(await value('metronome_directory_syncs_total', { platform: 'http', status: 'failed' })).toBe(1);
    expect(await value('metronome_directory_sync_seconds', { platform: 'whatsapp', le: '1' })).toBe(0);
    expect(await value('metronome_directory_sync_seconds', { platform: 'whatsapp', le: '2' })).toBe(1);
  });

  test('events without a metric change none', async () => {
    const { events, metrics } = setup();
    const before = await metrics.registry.getMetricsAsJSON();
    events.emit('lease:lost', { runId: 'r1', accountId: 'a1', chatId: 'c1' });
    events.emit('claim:lost', { runId: 'r1', error: new Error('x') });
    const after = await metrics.registry.getMetricsAsJSON();
    const sends = (m: typeof before) => JSON.stringify(m.filter((x) => x.name.startsWith('metronome_')));
    expect(sends(after)).toBe(sends(before));
  });
});
