import { Cluster } from 'ioredis';
import { answerWithin } from './answer-within.js';
import type { RedisClient } from './connection.js';

/** Null when Redis serves the service's keys now (a read of `probeKey`, which on a cluster reaches its slot's master), else why not. */
export async function redisReadiness(redis: RedisClient, probeKey: string, timeoutMs: number): Promise<string | null> {
  const states = redis instanceof Cluster ? clusterStates(redis, timeoutMs) : null;
  try {
    await answerWithin(redis.exists(probeKey), timeoutMs, 'readiness probe');
    return null;
  } catch (error) {
    const what = (error as Error).message;
    if (!states) return what;
    const tag = /\{[^}]+\}/.exec(probeKey)?.[0] ?? probeKey;
    return `the cluster does not serve the slot of ${tag} (${what}); ${await states}`;
  }
}

async function clusterStates(cluster: Cluster, timeoutMs: number): Promise<string> {
  const states = await Promise.all(
    cluster.nodes('all').map(async (node) => {
      try {
        const info = String(await answerWithin(node.cluster('INFO'), timeoutMs, 'cluster info'));
        return /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unknown';
      } catch {
        return 'no answer';
      }
    }),
  );
  const counts = new Map<string, number>();
  for (const s of states) counts.set(s, (counts.get(s) ?? 0) + 1);
  const parts = [...counts].map(([state, n]) => (state === 'no answer' ? `no answer from ${n}` : `${state} on ${n}`));
  return `cluster_state ${parts.join(', ') || 'unknown'} of ${states.length} nodes`;
}
