try:
    import redis
except ImportError:
    redis = None


class Backend:
    """A result backend as celery's: the client class is a class attribute
    holding the module, a method returns the class and another calls it;
    a cached property gives the client."""

    redis = redis
    prefix = 'fx:meta:'

    def _get_client(self):
        return self.redis.StrictRedis

    def _create_client(self, **params):
        return self._get_client()(**params)

    @cached_property
    def client(self):
        return self._create_client(host='localhost')

    def get(self, key):
        return self.client.get(key)

    def result(self, task_id):
        return self.get(self.prefix + task_id)  # want unregistered-code fx:meta:{task_id} via Backend.get


class Cache:
    """A method that returns some other class: its calls make no client."""

    def _get_client(self):
        return dict

    def client(self):
        return self._get_client()()

    def read(self, key):
        return self.client().get('fx:not:' + key)


def cached_property(f):
    return property(f)
