export { TelegramUserTransport, type TelegramUserTransportOptions } from './telegram-user-transport.js';
export { UserClientPool, type UserClientPoolOptions } from './client-pool.js';
export { gramjsClientFactory, gramjsProxy, type UserClient, type UserClientFactory, type UserClientOptions, type UserDialog } from './user-client.js';
export { classifyUserError, telegramRefusalOf, PEER_FLOOD_MESSAGE } from './user-errors.js';
export { randomIdOf } from './random-id.js';
export { loadUserClientFactory } from './client-module.js';
export { configureTelegramEndpoint, parseTelegramDc, telegramKeyFingerprint, trustTelegramServerKey, type TelegramEndpoint } from './server-endpoint.js';
export { keepLearntPeers, MemoryPeerStore, PeerUnknown } from './peers.js';
export { peersOf } from './peer-entities.js';
