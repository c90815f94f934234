import { z } from 'zod';

/** A Redis Cluster to connect to: its seed nodes, and the credentials and TLS every node shares. */
export interface RedisClusterNodes {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
  /** the nodes' `cluster-node-timeout`: how long the services ride a failover out */
  nodeTimeoutMs?: number;
}

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** Comma-separated seed nodes, `host:port` or `redis[s]://[user:password@]host:port`; credentials and TLS come from the first URL naming them. */
export const redisClusterNodes = z
  .string()
  .optional()
  .transform((v, ctx): RedisClusterNodes | undefined => {
    if (v === undefined || v.trim() === '') return undefined;
    const parsed: RedisClusterNodes = { nodes: [], tls: false };
    let credentialsSeen = false;
    for (const entry of v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const node = parseNode(entry);
      if (!node) {
        ctx.addIssue({ code: 'custom', message: `"${entry.replace(/\/\/[^@/]*@/, '//***@')}" is not host:port or a redis:// or rediss:// URL with a port` });
        return z.NEVER;
      }
      parsed.nodes.push({ host: node.host, port: node.port });
      if (node.tls) parsed.tls = true;
      if (!credentialsSeen && (node.username || node.password)) {
        credentialsSeen = true;
        if (node.username) parsed.username = node.username;
        if (node.password) parsed.password = node.password;
      }
    }
    if (parsed.nodes.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'expected at least one host:port' });
      return z.NEVER;
    }
    return parsed;
  });

function parseNode(entry: string): { host: string; port: number; tls: boolean; username?: string; password?: string } | null {
  if (entry.includes('://')) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      return null;
    }
    if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || !url.hostname || !url.port) return null;
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port),
      tls: url.protocol === 'rediss:',
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    };
  }
  const match = HOST_PORT.exec(entry);
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port, tls: false };
}

/** `{mtr}` for `mtr`: only the first `{…}` chooses a slot, so every key (and BullMQ's multi-key scripts) lives in one slot. */
export function hashTagged(prefix: string): string {
  return /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
}

/** Where a service's Redis is, and its prefix: hash-tagged on a cluster, as given on one node so an upgrade keeps every key and lock. */
export function redisConnection(env: {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES: RedisClusterNodes | undefined;
  REDIS_CLUSTER_NODE_TIMEOUT_MS: number;
  KEY_PREFIX: string;
}): {
  redis: string | RedisClusterNodes;
  keyPrefix: string;
} {
  if (env.REDIS_CLUSTER_NODES)
    return { redis: { ...env.REDIS_CLUSTER_NODES, nodeTimeoutMs: env.REDIS_CLUSTER_NODE_TIMEOUT_MS }, keyPrefix: hashTagged(env.KEY_PREFIX) };
  return { redis: env.REDIS_URL, keyPrefix: env.KEY_PREFIX };
}
