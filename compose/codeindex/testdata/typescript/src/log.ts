export function debug(message: string): void {
	format(message);
}

function format(message: string): string {
	return `[debug] ${message}`;
}
