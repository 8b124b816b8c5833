import redis

r = redis.Redis()


def record(sensor, ts, value):
    r.ts().add('fx:ts:' + sensor, ts, value)  # want unregistered-code fx:ts:{sensor}
    r.ts().range('fx:ts:' + sensor, 0, ts)  # want unregistered-code fx:ts:{sensor}
    r.ts().madd([('fx:ts:' + sensor, ts, value)])  # want unregistered-code fx:ts:{sensor}
    r.execute_command('TS.INCRBY', 'fx:count:' + sensor, 1)  # want unregistered-code fx:count:{sensor}


def documents(doc_id, seen):
    docs = r.json()
    docs.set('fx:doc:' + doc_id, '$', {'seen': seen})  # want unregistered-code fx:doc:{doc_id}
    docs.delete('fx:doc:' + doc_id)  # want unregistered-code fx:doc:{doc_id}
    r.bf().add('fx:seen:' + doc_id, seen)  # want unregistered-code fx:seen:{doc_id}


def nearby(lng, lat, area):
    r.georadius('fx:geo', lng, lat, 5, unit='km',  # want unregistered-code fx:geo
                store='fx:near:' + area)  # want unregistered-code fx:near:{area}


def not_modules(items):
    items.ts().add('fx:not-a-key', 1, 2)  # items is no client
