import { open, webhookAttemptOutcome, webhookHeaders, type Clock } from '@metronome/core';
import type { ClaimedDelivery, WebhookDeliveryRepository } from '@metronome/db';
import type { Logger } from '@metronome/observability';
import type { WebhookConfig } from '../config.js';
import { postWebhook, systemResolve, type PostOptions, type PostOutcome, type Resolve } from './post-webhook.js';

export interface WebhookDelivererDeps {
  repo: WebhookDeliveryRepository;
  clock: Clock;
  logger: Logger;
  config: WebhookConfig;
  /** SECRETS_KEY first, then SECRETS_KEY_PREVIOUS: opens the webhooks' sealed secrets */
  secretsKeys: Buffer[];
  owner: string;
  resolve?: Resolve;
  post?: (url: string, headers: Record<string, string>, body: string, options: PostOptions) => Promise<PostOutcome>;
  random?: () => number;
  batch?: number;
}

export interface WebhookDeliverer {
  /** One pass: claims the due deliveries, posts them, records each attempt; how many were attempted. */
  deliverDue(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/** Every API replica runs one: the claim (SKIP LOCKED plus a lease) gives each delivery to one, and a dead one's lease expires. */
export function createWebhookDeliverer(deps: WebhookDelivererDeps): WebhookDeliverer {
  const { repo, clock, logger, config } = deps;
  const post = deps.post ?? postWebhook;
  const resolve = deps.resolve ?? systemResolve;
  const batch = deps.batch ?? 20;
  const policy = { baseMs: config.retryBaseMs, maxMs: config.retryMaxMs, windowMs: 24 * 60 * 60 * 1000 };
  // a POST ends within timeoutMs; the lease outlives it by a margin so two never overlap
  const leaseMs = config.timeoutMs * 2 + 5_000;

  async function deliverOne(d: ClaimedDelivery): Promise<void> {
    const attempt = d.attempts + 1;
    let outcome: PostOutcome;
    try {
      const secret = open(d.secret, deps.secretsKeys).toString('utf8');
      const body = JSON.stringify(d.payload);
      outcome = await post(d.url, webhookHeaders(secret, d.id, clock.now(), body), body, {
        allowedHosts: config.allowedHosts,
        timeoutMs: config.timeoutMs,
        resolve,
      });
    } catch (err) {
      // a secret sealed under a key this process lacks, or a URL that no longer parses
      logger.error({ err, deliveryId: d.id, webhookId: d.webhookId }, 'webhook delivery could not be attempted');
      outcome = { ok: false, httpStatus: null, error: 'could not be attempted: the webhook secret or URL is unusable' };
    }
    const now = clock.now();
    const next = webhookAttemptOutcome(outcome.ok, attempt, d.retryFrom.getTime(), now, policy, deps.random);
    const kept = await repo.settle(d.id, deps.owner, {
      status: next.status,
      at: new Date(now),
      nextAttemptAt: next.status === 'pending' ? new Date(next.nextAttemptAt) : null,
      httpStatus: outcome.httpStatus,
      error: outcome.error,
    });
    const fields = { deliveryId: d.id, webhookId: d.webhookId, attempt, outcome: next.status, httpStatus: outcome.httpStatus, error: outcome.error };
    if (!kept) logger.warn(fields, 'webhook delivery lease lost before its attempt was recorded');
    else if (next.status === 'delivered') logger.debug(fields, 'webhook delivered');
    else logger.warn(fields, next.status === 'failed' ? 'webhook delivery failed for good' : 'webhook delivery attempt failed; will retry');
  }

  async function deliverDue(): Promise<number> {
    const now = clock.now();
    const claimed = await repo.claim(deps.owner, new Date(now), new Date(now + leaseMs), batch);
    await Promise.all(claimed.map((d) => deliverOne(d)));
    return claimed.length;
  }

  let running: Promise<void> | null = null;
  let stopped = false;
  let wake: (() => void) | null = null;

  async function loop(): Promise<void> {
    while (!stopped) {
      let attempted = 0;
      try {
        attempted = await deliverDue();
      } catch (err) {
        // PostgreSQL away: the outbox waits there; try again after the pause
        logger.warn({ err }, 'webhook delivery pass failed');
      }
      if (attempted > 0 || stopped) continue;
      await new Promise<void>((resolveSleep) => {
        const timer = setTimeout(resolveSleep, config.pollMs);
        wake = () => {
          clearTimeout(timer);
          resolveSleep();
        };
      });
      wake = null;
    }
  }

  return {
    deliverDue,
    start() {
      if (running) return;
      stopped = false;
      running = loop();
    },
    async stop() {
      stopped = true;
      wake?.();
      await running;
      running = null;
    },
  };
}
