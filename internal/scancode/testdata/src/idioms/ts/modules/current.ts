import { createClient } from 'redis';
import Redis from 'ioredis';

const client = createClient();
const io = new Redis();

export async function save(id: string, doc: object, seen: string) {
  await client.json.set(`fx:doc:${id}`, '$', doc); // want unregistered-code fx:doc:{id}
  await client.ts.add(`fx:ts:${id}`, '*', 1); // want unregistered-code fx:ts:{id}
  await client.bf.add(`fx:seen:${id}`, seen); // want unregistered-code fx:seen:{id}
  await io.call('TS.RANGE', `fx:ts:${id}`, 0, '+'); // want unregistered-code fx:ts:{id}
  await client.sendCommand(['SORT', `fx:list:${id}`, // want unregistered-code fx:list:{id}
    'STORE', `fx:sorted:${id}`]); // want unregistered-code fx:sorted:{id}
}

export function notModules(metrics: { ts: { add(k: string): void } }) {
  metrics.ts.add('fx:not-a-key');
}
