'use strict';

const redis = require('redis');

const client = redis.createClient();

// node-redis 3 code calls a command with a list it builds:
// client.hmget.apply(client, [key, …]) and client.del.call(client, k, …).
function load(ids, done) {
  const args = ['fx:apply:jobs'].concat(ids, done); // want unregistered-code fx:apply:jobs
  client.hmget.apply(client, args);
  client.del.call(client, 'fx:call:a', 'fx:call:b'); // want unregistered-code fx:call:a | want unregistered-code fx:call:b
  // A list made by map: the key is what the function returns.
  client.del.apply(client, ['a', 'b'].map((k) => 'fx:mapped:' + k)); // want unregistered-code fx:mapped:{k}
}

module.exports = { load };
