import type { Memcached } from './memcached';

// A declared type says what the receiver is, whatever it is called with.
export function typed(client: Memcached, id: string) {
  client.incrby('fx:no:typed:' + id, 1);
  return client.pttl('fx:no:typed:' + id);
}
