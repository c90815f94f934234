// Transports that load no platform library. WhatsApp (Baileys) and Telegram user (GramJS) are their own entries: each costs about
// half a second of CPU to load, so services load them on first use.
export type { Transport, TransportAccount, MediaContent, OutgoingMessage, OutgoingPart, PrepareResult } from './transport.js';
export { HttpTransport, type HttpTransportOptions } from './http-transport.js';
export { encodeIdempotencyKey, decodeIdempotencyKey } from './idempotency-key.js';
export { TelegramTransport, type TelegramTransportOptions } from './telegram/telegram-transport.js';
export { transportOnFirstUse, onFirstUse } from './on-first-use.js';
export { WHATSAPP_SHAPE, TELEGRAM_USER_SHAPE, type TransportShape } from './platform-shapes.js';
export { MEDIA_TOO_LARGE, TELEGRAM_BOT_UPLOAD_MAX_BYTES, UPLOAD_LIMITS, uploadTooLarge } from './upload-limits.js';
export { PairingError, type PairingStart, type PairingHooks, type PairingRequest } from './whatsapp/pairing.js';
export { realTimers, type Timers } from './whatsapp/timers.js';
export { CONNECT_BURST } from './whatsapp/connect-turns.js';
export { proxyOf, socksAgent, probeProxy, describeProxyError, ProxyFailedError, PROXY_RETRY_MS, type ProxyReport } from './proxy.js';
