/**
 * The client's entry point.
 */
export {Client, type Options} from './client.js';
export * from './http/index.js';
export {default as retry} from './retry';
