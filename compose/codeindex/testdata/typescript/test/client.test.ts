import {describe, it, expect} from 'vitest';
import {Client, createClient} from '../src/index.js';
import retry from '../src/retry';

function setup() {
	return createClient();
}

describe('Client', () => {
	it('gets', async () => {
		const c = setup();
		await c.get('/x');
		expect(new Client()).toBeTruthy();
	});
});

test('retry gives up', async () => {
	await retry(async () => 1, 1);
});
