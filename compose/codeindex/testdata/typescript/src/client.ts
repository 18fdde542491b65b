import {Transport, FetchTransport} from './http/transport.js';
import retry from './retry';
import * as log from './log';
import {EventEmitter} from 'node:events';
import ky from 'ky';

export interface Options {
	timeout?: number;
}

/** A client of the service. It retries. */
export class Client extends EventEmitter {
	#transport: Transport;

	constructor(private readonly options: Options = {}) {
		super();
		this.#transport = new FetchTransport();
	}

	/** Get a resource. */
	async get(path: string): Promise<string> {
		log.debug(path);
		return retry(() => this.send('GET', path), 3);
	}

	private send = async (method: string, path: string) => {
		ky(path);
		return this.#transport.request(method, path);
	};
}

export const createClient = (options?: Options): Client => new Client(options);
