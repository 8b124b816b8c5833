import redis


class Store:
    """Wrappers that hand Redis their arguments as they come: the keys
    are their callers' arguments, at the command's key positions."""

    def __init__(self):
        self.r = redis.Redis()
        self.shas = {}

    def remove(self, *keys):
        return self.r.delete(*keys)

    def run(self, name, *args):
        # EVALSHA sha numkeys key… arg…: numkeys says which are keys
        return self.r.evalsha(self.shas[name], *args)

    def remove_all(self, keys):
        return self.r.unlink(*keys)

    def drop(self, uid):
        self.remove(f"fx:spread:{uid}:a", f"fx:spread:{uid}:b")  # want unregistered-code fx:spread:{uid}:a via Store.remove | want unregistered-code fx:spread:{uid}:b via Store.remove
        self.run("pop", 1, f"fx:spread:{uid}:queue", "fx:not:a:key")  # want unregistered-code fx:spread:{uid}:queue via Store.run
        self.remove_all([f"fx:spread:{uid}:c", f"fx:spread:{uid}:d"])  # want unregistered-code fx:spread:{uid}:c via Store.remove_all | want unregistered-code fx:spread:{uid}:d via Store.remove_all
