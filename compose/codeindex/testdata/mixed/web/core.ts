export function price(n: number): number {
	return n * 100;
}
