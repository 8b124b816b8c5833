from redis import Redis


class Job:
    """Keys given by property getters, as rq's Job.key and dependents_key."""

    redis_job_namespace_prefix = 'fx:job:'

    def __init__(self, id, connection: Redis):
        self.id = id
        self.connection = connection

    @property
    def key(self):
        return self.key_for(self.id)

    @classmethod
    def key_for(cls, job_id):
        return f'{cls.redis_job_namespace_prefix}{job_id}'

    @property
    def dependents_key(self):
        return f'{self.redis_job_namespace_prefix}{self.id}:dependents'

    @property
    def composite(self):
        return f'{self.id}:{self.part}'

    @property
    def execution_key(self):
        return f'fx:exec:{self.composite}'

    @property
    def payload(self):
        return self._payload

    def save(self):
        self.connection.hset(self.key, mapping={'a': 1})  # want unregistered-code fx:job:{id}
        self.connection.sadd(self.dependents_key, 'x')  # want unregistered-code fx:job:{id}:dependents
        self.connection.hset(self.execution_key, 'a', 1)  # want unregistered-code fx:exec:{id}:{part}
        self.connection.get(self.payload)  # want raw-key {payload}


class Base:
    @property
    def key(self):
        return 'fx:base:' + self.name


class Left(Base):
    @property
    def key(self):
        return 'fx:left:' + self.name

    def touch(self, r: Redis):
        r.expire(self.key, 10)  # want raw-key {key}


class Execution:
    """A property of another object of a project class: one made with
    cls(…) in a classmethod, as rq's Execution.create."""

    def __init__(self, id, worker_name, connection: Redis):
        self.id = id
        self.worker_name = worker_name
        self.connection = connection

    @property
    def worker_executions_key(self):
        return 'fx:worker:{0}:executions'.format(self.worker_name)

    @classmethod
    def create(cls, id, worker_name, pipeline: Redis):
        execution = cls(id=id, worker_name=worker_name, connection=pipeline)
        pipeline.sadd(execution.worker_executions_key, execution.id)  # want unregistered-code fx:worker:{worker_name}:executions
        return execution


def index(r: Redis, worker_name):
    e = Execution('1', worker_name, r)
    r.expire(e.worker_executions_key, 60)  # want unregistered-code fx:worker:{worker_name}:executions
