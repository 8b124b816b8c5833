import Redis from 'ioredis';
import { Keys, Prefix, SESSION, siteKey } from './keys';

const r = new Redis();

export async function f(s: string, n: number) {
  await r.get(SESSION + s); // want unregistered-code fx:sess:{s}
  await r.get(Prefix.Lock + s); // want unregistered-code fx:lock:{s}
  await r.hgetall(siteKey(n)); // want unregistered-code fx:site:{n:int}
  await r.del(Keys.ORDER + s); // want unregistered-code fx:order:{s}
}
