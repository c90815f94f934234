import { ConfigError } from '@metronome/config';
import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { loadConfig } from './config.js';

const KEY = 'ab'.repeat(32);
const ADMIN = 'a-long-enough-admin-token';

describe('loadConfig', () => {
  test('defaults', () => {
    const c = loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY });
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      adminToken: ADMIN,
      minIntervalSeconds: 60,
      mediaMaxBytes: 16_777_216,
      defaultMaxSendPerMinute: 40,
      defaultGroupConcurrency: 3,
      rateLimitPerMinute: 600,
      authFailuresPerMinute: 30,
      trustedProxies: [],
      sseMaxPerToken: 10,
      keyPrefix: 'mtr',
      developmentSecretsKey: false,
      schedulerJitterMs: 0,
      instantStarts: 'create',
    });
    expect(c.secretsKey).toEqual(Buffer.from(KEY, 'hex'));
  });

  test('COOLING_*: on by default with the documented values; each one parsed, a bad one named', () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY }).cooling).toEqual({
      enabled: true,
      floodWaitsPerHour: 3,
      failureShare: 0.2,
      failureWindow: 50,
      coolingMs: 30 * 60_000,
      maxCoolingMs: 24 * 3_600_000,
      recoveryStep: 0.1,
      recoveryIntervalMs: 10 * 60_000,
    });
    const set = loadConfig({
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY: KEY,
      COOLING_ENABLED: 'false',
      COOLING_FLOOD_WAITS_PER_HOUR: '5',
      COOLING_FAILURE_PERCENT: '35',
      COOLING_FAILURE_WINDOW: '200',
      COOLING_DURATION: '1h',
      COOLING_MAX_DURATION: '2d',
      COOLING_RECOVERY_PERCENT: '25',
      COOLING_RECOVERY_INTERVAL: '90s',
    });
    expect(set.cooling).toEqual({
      enabled: false,
      floodWaitsPerHour: 5,
      failureShare: 0.35,
      failureWindow: 200,
      coolingMs: 3_600_000,
      maxCoolingMs: 172_800_000,
      recoveryStep: 0.25,
      recoveryIntervalMs: 90_000,
    });
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, COOLING_ENABLED: 'yes' })).toThrow(/COOLING_ENABLED/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, COOLING_FAILURE_PERCENT: '100' })).toThrow(/COOLING_FAILURE_PERCENT/);
  });

  test('INSTANT_STARTS is create or nudge; SCHEDULER_JITTER_MS is read as the scheduler reads it', () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, INSTANT_STARTS: 'nudge', SCHEDULER_JITTER_MS: '1500' })).toMatchObject({
      instantStarts: 'nudge',
      schedulerJitterMs: 1500,
    });
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, INSTANT_STARTS: 'later' })).toThrow(/INSTANT_STARTS/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, SCHEDULER_JITTER_MS: '-1' })).toThrow(/SCHEDULER_JITTER_MS/);
  });

  test("WHATSAPP_WS_URL: unset is WhatsApp's own server; a ws(s) URL is kept; any other scheme is refused, naming the variable", () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY }).whatsappWebSocketUrl).toBeNull();
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WHATSAPP_WS_URL: 'ws://127.0.0.1:9000/ws/chat?access_token=x' }).whatsappWebSocketUrl).toBe(
      'ws://127.0.0.1:9000/ws/chat?access_token=x',
    );
    for (const bad of ['https://web.whatsapp.com/ws/chat', 'not a url'])
      expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WHATSAPP_WS_URL: bad })).toThrow(/WHATSAPP_WS_URL.*(ws:\/\/ or wss:\/\/|WebSocket URL)/);
  });

  test('WHATSAPP_VERSION_PROXY: unset is straight; a socks5(h) URL is kept; anything else is refused, naming the variable', () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY }).whatsappVersion?.proxy).toBeNull();
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WHATSAPP_VERSION_PROXY: 'socks5h://u:p@10.0.0.9:1080' }).whatsappVersion?.proxy).toBe(
      'socks5h://u:p@10.0.0.9:1080',
    );
    for (const bad of ['http://10.0.0.9:3128', 'socks5://10.0.0.9', 'not a url'])
      expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WHATSAPP_VERSION_PROXY: bad })).toThrow(/WHATSAPP_VERSION_PROXY.*SOCKS5 proxy URL/);
  });

  test('TRUSTED_PROXIES is a comma-separated list of addresses and CIDR ranges', () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, TRUSTED_PROXIES: ' 10.0.0.5, 10.1.0.0/16 ,::1,fd00::/8,' }).trustedProxies).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
    ]);
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, TRUSTED_PROXIES: '' }).trustedProxies).toEqual([]);
  });

  test('WEBHOOK_*: allowed hosts default to any public host; a bad pattern is named with its variable', () => {
    expect(loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY }).webhooks).toEqual({
      allowedHosts: [{ host: '*', port: null }],
      retryBaseMs: 5_000,
      retryMaxMs: 3_600_000,
      timeoutMs: 10_000,
      pollMs: 1_000,
    });
    const set = loadConfig({
      ADMIN_TOKEN: ADMIN,
      SECRETS_KEY: KEY,
      WEBHOOK_ALLOWED_HOSTS: 'hooks.example.com, 127.0.0.1:9000',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '100',
    });
    expect(set.webhooks).toMatchObject({
      allowedHosts: [
        { host: 'hooks.example.com', port: null },
        { host: '127.0.0.1', port: 9000 },
      ],
      retryBaseMs: 200,
      retryMaxMs: 200,
    });
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WEBHOOK_ALLOWED_HOSTS: 'ok.example, http://bad/' })).toThrow(
      /WEBHOOK_ALLOWED_HOSTS[\s\S]*http:\/\/bad\//,
    );
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, WEBHOOK_TIMEOUT_MS: '5' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
  });

  test('outside development ADMIN_TOKEN and SECRETS_KEY are required, named in the error', () => {
    try {
      loadConfig({});
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as ConfigError).message;
      expect(message).toContain('ADMIN_TOKEN=unset');
      expect(message).toContain('SECRETS_KEY=unset');
    }
  });

  test('in development both may be missing: no operator, and the development key', () => {
    const c = loadConfig({ NODE_ENV: 'development' });
    expect(c.adminToken).toBeNull();
    expect(c.secretsKey).toEqual(DEVELOPMENT_SECRETS_KEY);
    expect(c.developmentSecretsKey).toBe(true);
  });

  test('bad values name the variable and hide secrets', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'short', SECRETS_KEY: KEY })).toThrow(/ADMIN_TOKEN="\*\*\*": expected at least 16/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, PORT: '70000' })).toThrow(/PORT="70000"/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, MIN_INTERVAL_SECONDS: '0' })).toThrow(/MIN_INTERVAL_SECONDS/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: 'abc' })).toThrow(/SECRETS_KEY="\*\*\*": expected 32 bytes/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, AUTH_FAILURES_PER_MINUTE: '0' })).toThrow(/AUTH_FAILURES_PER_MINUTE="0"/);
    expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, SSE_MAX_PER_TOKEN: 'ten' })).toThrow(/SSE_MAX_PER_TOKEN=/);
    for (const bad of ['10.0.0.1/33', 'proxy.local', '10.0.0.1/8/1', '::1/129', '10.0.0.0/a']) {
      expect(() => loadConfig({ ADMIN_TOKEN: ADMIN, SECRETS_KEY: KEY, TRUSTED_PROXIES: bad })).toThrow(/TRUSTED_PROXIES=/);
    }
  });
});
