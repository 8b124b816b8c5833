'use strict';

// A crate is given its depot: the class of this.depot is not known here.
class Crate {
  constructor(depot, id) {
    this.depot = depot;
    this.id = id;
  }

  retry() {
    return this.depot._clientNow().then((client) =>
      client.srem(this.depot.slotKey('failed'), this.id) // want unregistered-code fx:depot:{name}:failed
    );
  }

  static find(depot, id) {
    return depot._clientNow().then((client) => client.hget(depot.slotKey('crates'), id)); // want unregistered-code fx:depot:{name}:crates
  }

  keep(store) {
    return store.save('fx:not:followed'); // save is one word: store may be anything
  }

  put(either) {
    return either._put('fx:not:either'); // Depot's or Mirror's: not followed
  }

  label() {
    return this.depot.toString(); // a built-in's method, never the project's
  }
}

module.exports = Crate;
