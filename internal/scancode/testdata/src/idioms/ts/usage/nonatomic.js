// Two different Redis-only commands on a multi() of this.client.
class Counter {
  constructor(opts) {
    this.client = opts.storeClient;
  }

  bump(id) {
    const multi = this.client.multi();
    multi.incrby(`fx:cnt:${id}`, 1); // want unregistered-code fx:cnt:{id}
    multi.pexpire(`fx:cnt:${id}`, 1000); // want unregistered-code fx:cnt:{id}
    return this.exec(multi);
  }

  exec(multi) {
    return multi.exec();
  }
}

// A parameter of unknown type, and a member of one.
function touchAll(client, ids) {
  client.zadd('fx:seen', Date.now(), ids[0]); // want unregistered-code fx:seen
  return client.zremrangebyscore('fx:seen', 0, Date.now() - 1000); // want unregistered-code fx:seen
}

function record(opts, id) {
  opts.redis.hincrby('fx:hits', id, 1); // want unregistered-code fx:hits
  return opts.redis.expire('fx:hits', 60); // want unregistered-code fx:hits
}

module.exports = { Counter, touchAll, record };
