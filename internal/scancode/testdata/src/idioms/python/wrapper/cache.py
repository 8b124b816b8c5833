from redis import Redis


class Cache:
    """A wrapper around the client: put's key reaches Redis whole."""

    def __init__(self, conn: Redis):
        self.conn = conn

    def put(self, key, value):
        self.conn.set(key, value)

    def drop(self, key):
        self.put(key, None)
