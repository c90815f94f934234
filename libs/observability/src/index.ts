export * from './events.js';
export * from './logger.js';
export * from './metrics.js';
export * from './metrics-server.js';
export * from './round-trip-counters.js';
export * from './service-lifecycle.js';
export * from './receipt-metrics.js';
export * from './library-console.js';
