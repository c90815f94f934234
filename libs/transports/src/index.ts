export type { Transport, TransportAccount, MediaContent, OutgoingMessage, OutgoingPart, PrepareResult } from './transport.js';
export { HttpTransport, type HttpTransportOptions } from './http-transport.js';
export { encodeIdempotencyKey, decodeIdempotencyKey } from './idempotency-key.js';
export { TelegramTransport, type TelegramTransportOptions } from './telegram/telegram-transport.js';
export * from './whatsapp/index.js';
export * from './telegram-user/index.js';
export { proxyOf, socksAgent, probeProxy, describeProxyError, ProxyFailedError, PROXY_RETRY_MS, type ProxyReport } from './proxy.js';
