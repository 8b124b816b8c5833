'use strict';

const redis = require('redis');

// A client handed on by a promise (as bee-queue's _commandable): the
// parameter of the function given to then is what the promise resolves
// to.
class Store {
  constructor() {
    this.client = redis.createClient();
    this.ready = true;
  }

  commandable() {
    if (!this.ready) {
      return Promise.reject(new Error('closed'));
    }
    return Promise.resolve(this.client);
  }

  load(id) {
    return this.commandable().then((client) => client.hgetall('fx:then:' + id)); // want unregistered-code fx:then:{id}
  }

  // A promise of anything else: its value is no client.
  other(id, p) {
    return p.then((x) => x.get('fx:not:' + id));
  }
}

module.exports = Store;
