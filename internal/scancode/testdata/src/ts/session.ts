import Redis from "ioredis";
import { createClient } from "redis";
import * as keys from "./keys";

const SESSION_PREFIX = "auth:session:u";
const TMP = "tmp:";

const redis = new Redis();
const client = createClient();

export class Sessions {
  constructor(private readonly rdb: Redis) {}

  async get(userId: number) {
    return this.rdb.hgetall(`${SESSION_PREFIX}${userId}`); // want raw-key auth:session:u{userId:int}
  }

  async user(userId: number) {
    return client.hGetAll("user:" + userId + ":info"); // want raw-key user:{userId:int}:info
  }

  async multiLine(productNo: string) {
    const key =
      "cache:product:" +
      "detail:" +
      productNo;
    return redis.get(key); // want raw-key cache:product:detail:{productNo}
  }

  async unregistered(day: string) {
    await redis.del(TMP + "report:" + day, keys.seqOrderNo().key); // want unregistered-code tmp:report:{day}
    await client.sendCommand(["SET", "tmp:raw", "1"]); // want unregistered-code tmp:raw
  }

  async pipelined(orderId: number) {
    await redis
      .pipeline()
      .hgetall(["order", "order", orderId, "base"].join(":")) // want raw-key order:order:{orderId:int}:base
      .incr("seq:order:no") // want raw-key seq:order:no
      .exec();
    await client.eval("return 1", { keys: ["tmp:eval"], arguments: [] }); // want unregistered-code tmp:eval
    await redis.eval("return 1", 1, "promo:sku:" + orderId); // want raw-key promo:sku:{orderId:int}
  }

  async builders(orderId: number, userId: number) {
    await this.rdb.hgetall(keys.orderOrderBase(orderId).key);
    const k = keys.userInfo(userId);
    await client.hGetAll(k.toString());
    await this.passThrough(keys.promoSku(1));
    const m = new Map<string, string>();
    m.get("tmp:not-redis");
  }

  async passThrough(key: keys.Key) {
    return redis.hgetall(key.key);
  }
}
