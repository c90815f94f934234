import { failoverRetries } from './connection.js';

// ioredis' cluster retries, sized to the cluster's node timeout: a command bounced by a failover
// keeps being sent again for at least 2 × node timeout + 2 s, even if every bounce costs two tries.

test.each([2_000, 3_000, 15_000])('a node timeout of %i ms: retries for 2 × it + 2 s, two tries a bounce', (nodeTimeoutMs) => {
  const o = failoverRetries(nodeTimeoutMs);
  const delay = o.retryDelayOnFailover!;
  for (const d of [o.retryDelayOnMoved, o.retryDelayOnClusterDown, o.retryDelayOnTryAgain]) expect(d).toBe(delay);
  expect((o.maxRedirections! * delay) / 2).toBeGreaterThanOrEqual(2 * nodeTimeoutMs + 2_000);
});

test("unset: sized to Redis' default node timeout, 15 s", () => {
  expect(failoverRetries()).toEqual(failoverRetries(15_000));
});
