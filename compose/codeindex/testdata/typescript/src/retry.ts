/** Retry a function up to n times. */
export default async function retry<T>(fn: () => Promise<T>, n: number): Promise<T> {
	try {
		return await fn();
	} catch (error) {
		if (n <= 1) {
			throw error;
		}
		return retry(fn, n - 1);
	}
}
