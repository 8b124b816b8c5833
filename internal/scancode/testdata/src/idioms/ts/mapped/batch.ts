import Redis from 'ioredis';

const client = new Redis();

// Keys made by mapping a list: the element is the key's shape.
export function load(ids: number[]) {
  client.mget(ids.map((id) => `fx:mapped:${id}:name`)); // want unregistered-code fx:mapped:{id}:name
  client.del(...ids.map((id) => `fx:mapped:${id}:tmp`)); // want unregistered-code fx:mapped:{id}:tmp
  const keys = ids.map(function (id) {
    return 'fx:mapped:' + id + ':x'; // want unregistered-code fx:mapped:{id}:x
  });
  client.del(keys);
  const names = ['a', 'b'].map((n) => 'fx:mapped:' + n); // want unregistered-code fx:mapped:{n}
  client.unlink.apply(client, names);
  // SET's arguments after its key are not keys: a spread there is not read
  client.set('fx:mapped:first', ...ids.map((id) => `fx:not:${id}`)); // want unregistered-code fx:mapped:first
  // RPUSH's first argument is its key, the others values: one element
  // standing for all of them is not read as the key
  client.rpush(...ids.map((id) => `fx:not:${id}`));
  client.hmget.apply(client, ids.map((id) => `fx:not:${id}`));
}
