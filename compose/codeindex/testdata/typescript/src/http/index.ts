export {FetchTransport} from './transport.js';
export type {Transport} from './transport.js';
