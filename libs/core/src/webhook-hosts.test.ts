import { isNonPublicAddress } from './ip-ranges.js';
import { parseAllowedHosts, resolvedAddressVerdict, webhookUrlVerdict } from './webhook-hosts.js';

test('non-public addresses are told apart from public ones and from host names', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '[::1]',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
    '224.0.0.1',
  ]) {
    expect({ a, nonPublic: isNonPublicAddress(a) }).toEqual({ a, nonPublic: true });
  }
  for (const a of ['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8'])
    expect({ a, nonPublic: isNonPublicAddress(a) }).toEqual({ a, nonPublic: false });
  for (const a of ['localhost', 'example.com', '1.2.3', '256.1.1.1', '1::2::3']) expect(isNonPublicAddress(a)).toBeNull();
});

test('patterns parse, and a bad one is named', () => {
  expect(parseAllowedHosts(' *, Example.com:8443, *.hooks.example, 10.0.0.5, [::1]:9000 ')).toEqual([
    { host: '*', port: null },
    { host: 'example.com', port: 8443 },
    { host: '*.hooks.example', port: null },
    { host: '10.0.0.5', port: null },
    { host: '::1', port: 9000 },
  ]);
  expect(() => parseAllowedHosts('ok.example, http://x, a:99999')).toThrow(/not one: http:\/\/x, a:99999/);
});

test('at create: scheme, credentials, listed host and port, and literal non-public addresses only when named', () => {
  const any = parseAllowedHosts('*');
  expect(webhookUrlVerdict('https://hooks.example.com/x', any)).toEqual({ allowed: true });
  expect(webhookUrlVerdict('ftp://hooks.example.com/x', any).allowed).toBe(false);
  expect(webhookUrlVerdict('not a url', any).allowed).toBe(false);
  expect(webhookUrlVerdict('https://u:p@hooks.example.com/', any).allowed).toBe(false);
  for (const url of ['http://127.0.0.1:8080/', 'http://[::1]/', 'http://169.254.169.254/latest', 'http://10.0.0.5/'])
    expect(webhookUrlVerdict(url, any).allowed).toBe(false);
  const named = parseAllowedHosts('*, 127.0.0.1:8080');
  expect(webhookUrlVerdict('http://127.0.0.1:8080/', named)).toEqual({ allowed: true });
  expect(webhookUrlVerdict('http://127.0.0.1:8081/', named).allowed).toBe(false);
  const only = parseAllowedHosts('*.example.com');
  expect(webhookUrlVerdict('https://a.example.com/', only).allowed).toBe(true);
  expect(webhookUrlVerdict('https://example.com.evil.net/', only).allowed).toBe(false);
  expect(webhookUrlVerdict('https://example.com/', only).allowed).toBe(false);
});

test('at delivery: a name resolving to a non-public address passes only when named', () => {
  const any = parseAllowedHosts('*');
  const url = new URL('http://localhost:3000/hook');
  expect(resolvedAddressVerdict(url, '127.0.0.1', any).allowed).toBe(false);
  expect(resolvedAddressVerdict(url, '::1', any).allowed).toBe(false);
  expect(resolvedAddressVerdict(url, '93.184.216.34', any).allowed).toBe(true);
  expect(resolvedAddressVerdict(url, '127.0.0.1', parseAllowedHosts('localhost:3000')).allowed).toBe(true);
  expect(resolvedAddressVerdict(url, '127.0.0.1', parseAllowedHosts('*, 127.0.0.1')).allowed).toBe(true);
  expect(resolvedAddressVerdict(url, '127.0.0.1', parseAllowedHosts('localhost:4000')).allowed).toBe(false);
});
