import redis

r = redis.Redis()


def load(ids):
    """Keys made in a comprehension: the element is the key's shape."""
    r.mget([f"fx:mapped:{i}:name" for i in ids])  # want unregistered-code fx:mapped:{i}:name
    r.delete(*[f"fx:mapped:{i}:tmp" for i in ids])  # want unregistered-code fx:mapped:{i}:tmp
    r.unlink(*(f"fx:mapped:{i}:gen" for i in ids))  # want unregistered-code fx:mapped:{i}:gen
    keys = [f"fx:mapped:{i}:x" for i in ids]  # want unregistered-code fx:mapped:{i}:x
    r.exists(*keys)
    # SET's arguments after its key are not keys: a spread there is not read
    r.set("fx:mapped:first", *[f"fx:not:{i}" for i in ids])  # want unregistered-code fx:mapped:first
