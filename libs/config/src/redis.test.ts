import { commonEnv, ConfigError, hashTagged, parseEnv, redisConnection, z } from './index.js';

const schema = z.object(commonEnv);
const load = (env: Record<string, string>) => {
  const e = parseEnv(schema, env);
  return redisConnection(e);
};

function problems(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('accepted');
}

describe('Redis connection settings', () => {
  test('without REDIS_CLUSTER_NODES: REDIS_URL and KEY_PREFIX exactly as given (single-node keys keep their names)', () => {
    expect(load({})).toEqual({ redis: 'redis://127.0.0.1:6379', keyPrefix: 'mtr' });
    expect(load({ REDIS_URL: 'redis://cache:6380/2', KEY_PREFIX: 'prod' })).toEqual({ redis: 'redis://cache:6380/2', keyPrefix: 'prod' });
    expect(load({ KEY_PREFIX: '{prod}' })).toEqual({ redis: 'redis://127.0.0.1:6379', keyPrefix: '{prod}' });
  });

  test('REDIS_CLUSTER_NODES: host:port entries, the prefix hash-tagged', () => {
    expect(load({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001,redis-3.internal:7002', REDIS_URL: 'redis://ignored:1' })).toEqual({
      redis: {
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7001 },
          { host: 'redis-3.internal', port: 7002 },
        ],
        tls: false,
        nodeTimeoutMs: 15_000,
      },
      keyPrefix: '{mtr}',
    });
    expect(load({ REDIS_CLUSTER_NODES: '[::1]:7000', KEY_PREFIX: 'eu.{tenant-a}' }).keyPrefix).toBe('eu.{tenant-a}');
  });

  test('URL entries carry TLS and the credentials every node shares', () => {
    expect(load({ REDIS_CLUSTER_NODES: 'rediss://app:s%3Acret@node-1:6380,node-2:6380' }).redis).toEqual({
      nodes: [
        { host: 'node-1', port: 6380 },
        { host: 'node-2', port: 6380 },
      ],
      tls: true,
      username: 'app',
      password: 's:cret',
      nodeTimeoutMs: 15_000,
    });
  });

  test("REDIS_CLUSTER_NODE_TIMEOUT_MS: the cluster's node timeout, which sizes how long a failover is ridden out", () => {
    expect(load({ REDIS_CLUSTER_NODES: 'node-1:7000', REDIS_CLUSTER_NODE_TIMEOUT_MS: '2000' }).redis).toMatchObject({ nodeTimeoutMs: 2_000 });
    expect(problems({ REDIS_CLUSTER_NODES: 'node-1:7000', REDIS_CLUSTER_NODE_TIMEOUT_MS: '2s' })[0]).toMatch(/^REDIS_CLUSTER_NODE_TIMEOUT_MS=/);
  });

  test('a bad entry is named with the variable, its password hidden', () => {
    expect(problems({ REDIS_CLUSTER_NODES: 'node-1:7000,node-2' })).toEqual([expect.stringMatching(/^REDIS_CLUSTER_NODES=.*"node-2" is not host:port/)]);
    expect(problems({ REDIS_CLUSTER_NODES: 'node-1:99999' })[0]).toMatch(/^REDIS_CLUSTER_NODES=/);
    expect(problems({ REDIS_CLUSTER_NODES: 'http://node-1:7000' })[0]).toMatch(/^REDIS_CLUSTER_NODES=/);
    const [line] = problems({ REDIS_CLUSTER_NODES: 'redis://app:hunter2@node-1' });
    expect(line).toMatch(/^REDIS_CLUSTER_NODES=/);
    expect(line).not.toContain('hunter2');
    expect(problems({ REDIS_CLUSTER_NODES: ' , ' })[0]).toMatch(/^REDIS_CLUSTER_NODES=.*at least one/);
  });

  test('KEY_PREFIX takes one {…} hash tag, nothing else new', () => {
    expect(problems({ KEY_PREFIX: 'a{b}{c}' })[0]).toMatch(/^KEY_PREFIX=/);
    expect(problems({ KEY_PREFIX: '{}' })[0]).toMatch(/^KEY_PREFIX=/);
    expect(problems({ KEY_PREFIX: 'a b' })[0]).toMatch(/^KEY_PREFIX=/);
  });

  test('hashTagged wraps an untagged prefix and keeps a tagged one', () => {
    expect(hashTagged('mtr')).toBe('{mtr}');
    expect(hashTagged('{mtr}')).toBe('{mtr}');
    expect(hashTagged('eu.{a}.x')).toBe('eu.{a}.x');
  });
});
