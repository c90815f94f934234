import { createHmac } from 'node:crypto';
import { newWebhookSecret, webhookHeaders, webhookKey, webhookSignature } from './webhook-signature.js';

test('the Standard Webhooks example signs as the specification says', () => {
  // the test vector of the Standard Webhooks reference libraries
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  expect(webhookSignature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('a new secret is whsec_ and base64 of 32 random bytes, a different one each time', () => {
  const a = newWebhookSecret();
  expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
  expect(webhookKey(a)).toHaveLength(32);
  expect(newWebhookSecret()).not.toBe(a);
});

test('headers carry the id, the attempt time in seconds and the signature over both and the body', () => {
  const secret = newWebhookSecret();
  const headers = webhookHeaders(secret, 'abc', 1_700_000_000_999, '{"a":1}');
  expect(headers['webhook-id']).toBe('abc');
  expect(headers['webhook-timestamp']).toBe('1700000000');
  const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
    .update('abc.1700000000.{"a":1}')
    .digest('base64');
  expect(headers['webhook-signature']).toBe(`v1,${expected}`);
});
