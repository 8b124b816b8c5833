'use strict';
const Redis = require('ioredis');

// A parameter given a new value once, in the function's own body: after
// that statement it holds the new value.
class Limiter {
  constructor() {
    this.client = new Redis();
    this.prefix = 'fx:rl:';
  }

  hit(key) {
    key = this.prefix + key;
    return this.client.incr(key); // want unregistered-code fx:rl:{key}
  }

  maybe(key, on) {
    if (on) {
      key = this.prefix + key;
    }
    return this.client.get(key); // want raw-key {key}
  }
}

module.exports = Limiter;
