// Stores that are no Redis client: what they call is what a Map, a
// memcached or etcd client, a cache also has, or one Redis name only.
class MemcacheStore {
  constructor(opts) {
    this.client = opts.storeClient;
  }

  bump(key) {
    this.client.incr('fx:no:mc:' + key, 1, () => {});
    this.client.touch('fx:no:mc:' + key, 10, () => {});
    this.client.append('fx:no:mc:' + key, 'x', () => {});
    return this.client.del('fx:no:mc:' + key, () => {});
  }
}

class EtcdStore {
  constructor(opts) {
    this.client = opts.storeClient;
  }

  read(key) {
    this.client.watch().key('fx:no:etcd').create();
    return this.client.get('fx:no:etcd:' + key).string();
  }
}

class CacheStore {
  constructor(opts) {
    this.cache = opts.cache;
  }

  read(key) {
    this.cache.ttl('fx:no:ttl:' + key);
    this.cache.mget(['fx:no:m1', 'fx:no:m2']);
    this.cache.expire('fx:no:one:' + key, 10); // one Redis-only name is not enough
    return this.cache.get('fx:no:cache:' + key);
  }
}

// Constructed here: what it is, the scan knows; not a client however
// Redis-like its methods are named.
class Local {
  hset() {}
  hgetall() {}
}

function locals(id) {
  const local = new Local();
  local.hset('fx:no:local:' + id, 'a', 1);
  const map = new Map();
  map.set('fx:no:map', 1);
  return local.hgetall('fx:no:local:' + id);
}

// The same parameter name in another function is another receiver.
function once(client, id) {
  return client.hset('fx:no:once:' + id, 'a', 1);
}

function twice(client, id) {
  client.sadd('fx:two:' + id, 'a'); // want unregistered-code fx:two:{id}
  return client.scard('fx:two:' + id); // want unregistered-code fx:two:{id}
}

module.exports = { MemcacheStore, EtcdStore, CacheStore, locals, once, twice };
