const Redis = require("ioredis");
const redis = new Redis();
const PREFIX = "user:";

async function load(id) {
  return redis.hgetall(PREFIX + id + ":info"); // want raw-key user:{id}:info
}

async function nope(name) {
  return redis.get(`tmp:${name}`); // want unregistered-code tmp:{name}
}

module.exports = { load, nope };
