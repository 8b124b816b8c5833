const redis = require('redis');
const bluebird = require('bluebird');

// node_redis 3: module commands added by name, promisified by bluebird.
redis.addCommand('ts.add');
redis.addCommand('ts.range');
bluebird.promisifyAll(redis);

const client = redis.createClient();

const record = async (sensor, ts, value) => {
  await client.ts_addAsync(`fx:ts:${sensor}`, ts, value); // want unregistered-code fx:ts:{sensor}
  return client.ts_rangeAsync(`fx:ts:${sensor}`, 0, ts); // want unregistered-code fx:ts:{sensor}
};

const nearby = async (lng, lat, area) => {
  const batch = client.batch();
  batch.georadiusAsync('fx:geo', lng, lat, 5, 'km', // want unregistered-code fx:geo
    'STORE', `fx:near:${area}`); // want unregistered-code fx:near:{area}
  batch.georadiusAsync('fx:geo', lng, lat, 5, 'km', 'WITHDIST'); // want unregistered-code fx:geo
  return batch.execAsync();
};

module.exports = { record, nearby };
