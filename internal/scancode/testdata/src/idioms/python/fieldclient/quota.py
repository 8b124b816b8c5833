class Quota:
    """Reaches the client through objects the scan cannot type
    (app.backend.client): a field the project's classes set, whose
    client field a class sets to a Redis client."""

    def __init__(self, app, name):
        self.app = app
        self.key = '%s.quota.%s' % (app.name, name)
        self._client = self.app.backend.client

    def take(self, now):
        pipe = self._client.pipeline(True)
        pipe.zadd(self.key, {str(now): now})  # want unregistered-code {name}.quota.{name}
        pipe.zcard(self.key)  # want unregistered-code {name}.quota.{name}
        return pipe.execute()

    def give(self, member):
        return self._client.zrem(self.key, member)  # want unregistered-code {name}.quota.{name}

    def not_clients(self, db):
        self.app.backend.settings.get('fx:not-a-key')  # settings is no client
        db.client.get('fx:not-a-key')  # db is nothing the project sets
