from redis import Redis


class BaseRegistry:
    """A key template per class, set again by each subclass (as rq's
    registries): in the base, self.key_template is any of them, the
    base's own and those of the subclasses that run the method; each is
    reported there."""

    key_template = 'fx:registry:{0}'

    def __init__(self, name, connection: Redis):
        self.connection = connection
        self.key = self.key_template.format(name)

    def count(self):
        return self.connection.zcard(self.key)  # want unregistered-code fx:registry:{name} | want unregistered-code fx:wip:{name} | want unregistered-code fx:failed:{name} | want unregistered-code fx:own:{name}

    def trim(self, score):
        # Overrides declares trim again: its template is not this line's.
        self.connection.zremrangebyscore(self.key, 0, score)  # want unregistered-code fx:registry:{name} | want unregistered-code fx:wip:{name} | want unregistered-code fx:failed:{name}


class StartedRegistry(BaseRegistry):
    key_template = 'fx:wip:{0}'


class FailedRegistry(BaseRegistry):
    key_template = 'fx:failed:{0}'

    def drop(self, job_id):
        # In a subclass, self is one of its own: its template.
        self.connection.zrem(self.key, job_id)  # want unregistered-code fx:failed:{name}


class Overrides(BaseRegistry):
    key_template = 'fx:own:{0}'

    def trim(self, score):
        self.connection.zremrangebyscore(self.key, '-inf', score)  # want unregistered-code fx:own:{name}


class ExecutionRegistry:
    """A template of its own class, formatted with .format()."""

    key_template = 'fx:executions:{0}'

    def __init__(self, job_id, connection: Redis):
        self.connection = connection
        self.key = self.key_template.format(job_id)

    def cleanup(self, score):
        self.connection.zremrangebyscore(self.key, 0, score)  # want unregistered-code fx:executions:{job_id}


class Named(ExecutionRegistry):
    """Inherited and not set again: the base's."""

    def size(self, job_id):
        return self.connection.zcard(self.key_template.format(job_id))  # want unregistered-code fx:executions:{job_id}
