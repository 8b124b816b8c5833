// A library that takes the client as an option: no type says what
// this.client is, what the class calls on it does.
const script = 'return redis.call("incrby", KEYS[1], ARGV[1])';

module.exports = class Limiter {
  constructor(opts) {
    this.client = opts.storeClient;
    this.client.defineCommand('limIncr', { numberOfKeys: 2, lua: script });
  }

  consume(id) {
    return this.client.limIncr(`fx:lim:${id}`, // want unregistered-code fx:lim:{id}
      `fx:lim:${id}:t`, 1); // want unregistered-code fx:lim:{id}:t
  }

  consumeList(id) {
    return this.client.limIncr([`fx:lim:${id}`, // want unregistered-code fx:lim:{id}
      'fx:lim:all', '1']); // want unregistered-code fx:lim:all
  }

  consumeConcat(id, args) {
    return this.client.limIncr([`fx:cat:${id}`].concat(args)); // want unregistered-code fx:cat:{id}
  }

  consumeVar(id) {
    const keysAndArgs = [`fx:var:${id}`, 'fx:var:all', '1']; // want unregistered-code fx:var:{id} | want unregistered-code fx:var:all
    return this.client.limIncr(keysAndArgs);
  }

  read(id) {
    return this.client.multi()
      .get(`fx:lim:${id}`) // want unregistered-code fx:lim:{id}
      .pttl(`fx:lim:${id}`) // want unregistered-code fx:lim:{id}
      .exec();
  }

  _delete(key) {
    return this.client.del(key);
  }

  reset(id) {
    return this._delete(`fx:lim:${id}`, { force: true }); // want unregistered-code fx:lim:{id} via Limiter._delete
  }
};
