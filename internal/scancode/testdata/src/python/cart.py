"""Cart service: several raw keys, one through the generated builder."""
import redis

from app import keys

SKU_PREFIX = "promo:sku:"
TMP = "tmp:"

r = redis.Redis.from_url("redis://localhost:6379/0")


class Cart:
    def __init__(self, client: redis.Redis):
        self.redis = client

    def user(self, user_id: int):
        return self.redis.hgetall(f"user:{user_id}:info")  # want raw-key user:{user_id:int}:info

    def sku(self, sku_id):
        return r.hget(SKU_PREFIX + str(sku_id), "price")  # want raw-key promo:sku:{sku_id}

    def order(self, order_id: int):
        key = ("order:order:"
               + str(order_id)
               + ":base")
        return self.redis.hgetall(key)  # want raw-key order:order:{order_id:int}:base

    def percent(self, product_no):
        return r.get("cache:product:detail:%s" % product_no)  # want raw-key cache:product:detail:{product_no}

    def formatted(self, phone, scene):
        return r.get("verify:sms:{}:{}".format(phone, scene))  # want raw-key verify:sms:{phone}:{scene}

    def report(self, day):
        r.delete(TMP + "report:" + day, keys.seq_order_no())  # want unregistered-code tmp:report:{day}

    def pipeline(self, user_id: int):
        with r.pipeline() as pipe:
            pipe.incr("seq:order:no")  # want raw-key seq:order:no
            pipe.expire(name="tmp:expire", time=10)  # want unregistered-code tmp:expire
            pipe.execute()

    def joined(self, order_id: int):
        return r.hgetall(":".join(["order", "order", str(order_id), "base"]))  # want raw-key order:order:{order_id:int}:base

    def scripted(self):
        return r.eval("return 1", 1, "tmp:script", "arg")  # want unregistered-code tmp:script

    def builders(self, order_id: int, user_id: int):
        self.redis.hgetall(keys.order_order_base(order_id))
        k = keys.user_info(user_id)
        self.redis.hgetall(k)
        self.passthrough(keys.promo_sku(1))
        cache = {}
        cache.get("tmp:not-redis")

    def passthrough(self, key: keys.Key):
        return self.redis.hgetall(key)
