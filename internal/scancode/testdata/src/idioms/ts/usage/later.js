'use strict';

// A field that starts as null and is given its client later, under a
// name the code computes (this[clientName] = client), as bee-queue's
// Queue: what the class calls on it shows the client. The keys' prefix
// is a property of an object literal kept in a field, its first part a
// setting or its default.
class Queue {
  constructor(name, settings) {
    this.name = name;
    this.client = null;
    this.cache = null;
    this.settings = {
      keyPrefix: (settings.prefix || 'fx') + ':bq:' + name + ':',
      autoConnect: true,
    };
  }

  makeClient(clientName, make) {
    return make().then((client) => (this[clientName] = client));
  }

  toKey(s) {
    return this.settings.keyPrefix + s;
  }

  preventStall(id) {
    return this.client.srem(this.toKey('stalling'), id); // want unregistered-code {prefix}:bq:{name}:stalling
  }

  finish(job) {
    const multi = this.client
      .multi()
      .lrem(this.toKey('active'), 0, job.id) // want unregistered-code {prefix}:bq:{name}:active
      .srem(this.toKey('stalling'), job.id); // want unregistered-code {prefix}:bq:{name}:stalling
    multi.hset(this.toKey('jobs'), job.id, job.data); // want unregistered-code {prefix}:bq:{name}:jobs
    return multi.exec();
  }

  // A null field with nothing Redis-only called on it: a Map's get.
  cached(id) {
    return this.cache.get(this.toKey(id));
  }
}

module.exports = Queue;
