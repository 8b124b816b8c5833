'use strict';
const redis = require('redis');
const lua = require('./lua');

// A script runner that copies its arguments and applies evalsha to them
// on the client its caller gives (as bee-queue does): the keys are its
// callers' arguments, numkeys of them after the script's name.
class JobQueue {
  constructor(name) {
    this.client = null;
    this.prefix = 'fx:bq:' + name + ':';
  }

  connect() {
    this.client = redis.createClient();
  }

  _commandable() {
    return Promise.resolve(this.client);
  }

  keyOf(s) {
    return this.prefix + s;
  }

  removeJob(jobId) {
    return this._evalScript(
      'removeJob',
      2,
      this.keyOf('succeeded'), // want unregistered-code fx:bq:{name}:succeeded via JobQueue._evalScript
      this.keyOf('failed'), // want unregistered-code fx:bq:{name}:failed via JobQueue._evalScript
      jobId
    );
  }

  legacy(jobId) {
    return this._slice('legacy', 1, this.keyOf('jobs'), jobId); // want unregistered-code fx:bq:{name}:jobs via JobQueue._slice
  }

  direct() {
    return this._direct('sha', 1, this.keyOf('direct'), 'fx:not:a:key'); // want unregistered-code fx:bq:{name}:direct via JobQueue._direct
  }

  _direct() {
    return this.client.evalsha.apply(this.client, arguments);
  }

  _evalScriptOn(commandable, args) {
    args[0] = lua.shas[args[0]];
    return new Promise((resolve) => {
      args.push(resolve);
      commandable.evalsha.apply(commandable, args);
    });
  }

  _evalScript() {
    const args = new Array(arguments.length);
    for (let i = 0; i < arguments.length; ++i) {
      args[i] = arguments[i];
    }
    return this._commandable().then((client) => this._evalScriptOn(client, args));
  }

  _slice() {
    const args = Array.prototype.slice.call(arguments);
    return this._commandable().then((client) => this._evalScriptOn(client, args));
  }

  // A receiver that is not a client: nothing of its callers is a key.
  _logOn(logger, args) {
    logger.evalsha.apply(logger, args);
  }

  log() {
    this._logOn(console, ['fx:not:redis', 1, 'fx:not:redis:either']);
  }
}

module.exports = JobQueue;
