from redis import Redis

from .cache import Cache
from .keys import SESSION


class Sessions:
    def __init__(self):
        self.cache = Cache(Redis())

    def save(self, uid):
        self.cache.put(SESSION + uid, 1)  # want unregistered-code fx:sess:{uid} via Cache.put
        self.cache.drop(f'fx:gone:{uid}')  # want unregistered-code fx:gone:{uid} via Cache.drop
        self.cache.put(value=2, key='fx:kw:' + uid)  # want unregistered-code fx:kw:{uid} via Cache.put
