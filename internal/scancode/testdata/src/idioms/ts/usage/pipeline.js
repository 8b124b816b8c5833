// One Redis-only command queued on a pipeline() that is executed.
class Scores {
  constructor(conn) {
    this.conn = conn;
  }

  add(member) {
    return this.conn.pipeline().zincrby('fx:scores', 1, member).exec(); // want unregistered-code fx:scores
  }
}

// A pipeline() that is never executed, and one Redis-only name: no
// evidence.
class Batches {
  constructor(conn) {
    this.conn = conn;
  }

  add(member) {
    this.conn.pipeline().zincrby('fx:no:batch', 1, member);
  }
}

// A script's number of keys the definition does not give: the first
// argument is the key.
class Scripted {
  constructor(opts) {
    this.redis = opts.redis;
    this.redis.defineCommand('bump', { numberOfKeys: opts.keys, lua: opts.lua });
  }

  bump(id) {
    return this.redis.bump(`fx:bump:${id}`, 'fx:no:arg'); // want unregistered-code fx:bump:{id}
  }

  bumpQueued(id) {
    return this.redis.multi().bump(`fx:bump:${id}:q`, 'fx:no:arg').exec(); // want unregistered-code fx:bump:{id}:q
  }
}

module.exports = { Scores, Batches, Scripted };
