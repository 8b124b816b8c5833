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
        self.r.expire(key, 60)  # composed of parameters: its callers are checked

    def tick(self, uid):
        self.window(f"fx:rw:{uid}", 1)  # want unregistered-code fx:rw:{uid}:1 via Limiter.window

    def put(self, key):
        self.r.set(key, 1)  # a parameter whole: its callers are checked

    def put_slot(self, key, slot):
        self.put(f"{key}:{slot}")  # composed of parameters: its callers are checked

    def mark(self, uid):
        self.put_slot(f"fx:rm:{uid}", 2)  # want unregistered-code fx:rm:{uid}:2 via Limiter.put_slot

    def maybe(self, key, on):
        if on:
            key = self.prefixed(key)
        return self.r.get(key)  # want raw-key {key}
