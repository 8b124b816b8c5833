'use strict';

// A field that starts as null and is given its client later, under a
// name the code computes (this[clientName] = client), as bee-queue's
// Queue: what the class calls on it shows the client.
class Queue {
  constructor(name) {
    this.name = name;
    this.client = null;
    this.cache = null;
  }

  makeClient(clientName, make) {
    return make().then((client) => (this[clientName] = client));
  }

  toKey(s) {
    return 'fx:bq:' + s;
  }

  preventStall(id) {
    return this.client.srem(this.toKey('stalling'), id); // want unregistered-code fx:bq:stalling
  }

  finish(job) {
    const multi = this.client
      .multi()
      .lrem(this.toKey('active'), 0, job.id) // want unregistered-code fx:bq:active
      .srem(this.toKey('stalling'), job.id); // want unregistered-code fx:bq:stalling
    multi.hset(this.toKey('jobs'), job.id, job.data); // want unregistered-code fx:bq:jobs
    return multi.exec();
  }

  // A null field with nothing Redis-only called on it: a Map's get.
  cached(id) {
    return this.cache.get(this.toKey(id));
  }
}

module.exports = Queue;
