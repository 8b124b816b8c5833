'use strict';
const redis = require('redis');

// The one class that declares _clientNow and slotKey: a receiver of
// unknown class calling them (a job given its depot) reaches these.
class Depot {
  constructor(name) {
    this.client = redis.createClient();
    this.prefix = 'fx:depot:' + name + ':';
  }

  _clientNow() {
    return Promise.resolve(this.client);
  }

  slotKey(s) {
    return this.prefix + s;
  }

  // Declared by Mirror too: a receiver of unknown class may be either.
  _put(key) {
    return this.client.set(key, '2');
  }

  // A single word: other objects may have a save too.
  save(key) {
    return this.client.set(key, '1');
  }
}

module.exports = Depot;
