const redis = require('./redis_client');

const add = async (id) => {
  const client = redis.getClient();
  await client.zaddAsync('fx:rank', 1, id); // want unregistered-code fx:rank
};

module.exports = { add };
