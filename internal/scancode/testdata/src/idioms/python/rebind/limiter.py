import redis


class Limiter:
    """A parameter given a new value once, in the function's own body:
    after that statement it holds the new value."""

    def __init__(self):
        self.r = redis.Redis()
        self.key_prefix = "fx:rl"

    def prefixed(self, key):
        return f"{self.key_prefix}:{key}"

    def hit(self, key):
        key = self.prefixed(key)
        return self.r.incr(key)  # want unregistered-code fx:rl:{key}

    def window(self, key, slot):
        key = f"{key}:{slot}"
        self.r.expire(key, 60)  # want raw-key {key}:{slot}

    def maybe(self, key, on):
        if on:
            key = self.prefixed(key)
        return self.r.get(key)  # want raw-key {key}
