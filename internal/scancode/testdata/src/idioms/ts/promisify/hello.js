const redis = require('redis');
const util = require('util');
const { promisify } = require('util');
const fs = require('fs');

const client = redis.createClient();

// Functions made of a client's command: each is the command.
const setAsync = promisify(client.set).bind(client);
const getAsync = util.promisify(client.get.bind(client));
const hgetall = client.hgetall.bind(client);

const run = async (id) => {
  await setAsync(`fx:hello:${id}`, 'world'); // want unregistered-code fx:hello:{id}
  await getAsync(`fx:hello:${id}`); // want unregistered-code fx:hello:{id}
  hgetall(`fx:user:${id}`, () => {}); // want unregistered-code fx:user:{id}
};

// Not commands: a promisified function of another module, a command
// taken off the client without binding it.
const readFile = promisify(fs.readFile);
const unbound = client.get;

const other = async () => {
  await readFile('fx:not-a-key');
  unbound('fx:not-a-key');
};

module.exports = { run, other };
