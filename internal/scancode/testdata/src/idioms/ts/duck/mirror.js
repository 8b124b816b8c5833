'use strict';
const redis = require('redis');

class Mirror {
  constructor() {
    this.client = redis.createClient();
  }

  _put(key) {
    return this.client.set(key, '3');
  }
}

module.exports = Mirror;
