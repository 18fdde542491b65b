/** Sends requests. */
export interface Transport {
	/** Send one request. */
	request(method: string, path: string): Promise<string>;
}

abstract class BaseTransport implements Transport {
	abstract request(method: string, path: string): Promise<string>;

	protected headers(): Record<string, string> {
		return {};
	}
}

export class FetchTransport extends BaseTransport {
	async request(method: string, path: string): Promise<string> {
		const h = this.headers();
		const r = await fetch(path, {method, headers: h});
		return r.text();
	}
}
