import redis

from . import keys
from .keys import Queue, job_key

r = redis.Redis()


def run(jid, name):
    r.hgetall(job_key(jid))  # want unregistered-code fx:job:{jid}
    r.llen(Queue.PREFIX + name)  # want unregistered-code fx:queue:{name}
    r.delete(keys.job_key(jid))  # want unregistered-code fx:job:{jid}
