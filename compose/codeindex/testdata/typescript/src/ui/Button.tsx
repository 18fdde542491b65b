import React from 'react';
import {createClient} from '../client';

export function Label({text}: {text: string}) {
	return <span>{text}</span>;
}

export default function Button() {
	const c = createClient();
	return <button onClick={() => c.get('/')}><Label text="go" /></button>;
}
