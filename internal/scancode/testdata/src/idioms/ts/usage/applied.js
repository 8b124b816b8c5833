'use strict';

// A client given as an option, whose commands the class calls only with
// apply and call: they are what shows it is one.
class Jobs {
  constructor(opts) {
    this.client = opts.client;
  }

  load(ids) {
    this.client.hmget.apply(this.client, ['fx:applied:jobs'].concat(ids)); // want unregistered-code fx:applied:jobs
  }

  drop(id) {
    this.client.srem.call(this.client, 'fx:applied:set', id); // want unregistered-code fx:applied:set
  }
}

module.exports = Jobs;
