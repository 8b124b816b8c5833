from redis import Redis
from redis import Redis as BaseRedis


class Registry:
    connection: Redis
    PREFIX = 'fx:reg:'

    def __init__(self, url=None):
        if url:
            self.connection = Redis.from_url(url)
        else:
            self.connection = Redis()

    def add(self, name, pipeline=None):
        connection = pipeline if pipeline is not None else self.connection
        connection.zadd(self.PREFIX + name, {'x': 1})  # want unregistered-code fx:reg:{name}


class Pool(BaseRedis):
    def job(self, jid):
        return self.get('fx:pool:' + jid)  # want unregistered-code fx:pool:{jid}


class Worker:
    def __init__(self, pool):
        self._pool = pool

    @property
    def pool(self) -> Pool:
        return self._pool

    async def go(self, jid):
        async with self.pool.pipeline(transaction=True) as pipe:
            pipe.incr('fx:retry:' + jid)  # want unregistered-code fx:retry:{jid}


def decode_redis_hash(raw):
    return dict(raw)


def not_clients(raw):
    obj = decode_redis_hash(raw)
    obj.get('status')
    redis_conf = {}
    redis_conf.get('fx:not-a-key')


class Annotated:
    connection: Redis

    def read(self, x):
        return self.connection.get('fx:ann:' + x)  # want unregistered-code fx:ann:{x}
