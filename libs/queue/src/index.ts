export * from './directory-queue.js';
export * from './run-queue.js';
