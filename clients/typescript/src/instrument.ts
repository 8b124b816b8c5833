import { templateOf, TemplateLike } from "./guard";
import type { Metrics, Recorder } from "./writers";

/** Commands that write their keys (Redis 7.0), lower-case without separators. */
const WRITES = new Set(`append bitfield bitop blmove blmpop blpop brpop brpoplpush bzmpop bzpopmax bzpopmin copy decr decrby del
expire expireat geoadd georadius georadiusbymember geosearchstore getdel getex getset hdel hincrby hincrbyfloat hmset hset hsetnx
incr incrby incrbyfloat linsert lmove lmpop lpop lpush lpushx lrem lset ltrim migrate move mset msetnx persist pexpire pexpireat
pfadd pfmerge psetex rename renamenx restore rpop rpoplpush rpush rpushx sadd sdiffstore set setbit setex setnx setrange
sinterstore smove sort spop srem sunionstore unlink xack xadd xautoclaim xclaim xdel xgroup xsetid xtrim zadd zdiffstore zincrby
zinterstore zmpop zpopmax zpopmin zrangestore zrem zremrangebylex zremrangebyrank zremrangebyscore zunionstore`.split(/\s+/));

const READS = new Set(`get mget getrange strlen exists type ttl pttl hget hmget hgetall hkeys hvals hlen hexists hscan hstrlen
hrandfield lrange llen lindex lpos smembers sismember smismember scard srandmember sscan sinter sunion sdiff zrange zrangebyscore
zrevrange zrevrangebyscore zscore zmscore zcard zcount zrank zrevrank zscan pfcount xrange xrevrange xlen xread geopos geodist
geosearch getbit bitcount bitpos dump object memory`.split(/\s+/));

export interface InstrumentOptions {
  /** The calling service, e.g. "order-team". */
  service: string;
  recorder?: Recorder;
  metrics?: Metrics;
}

/**
 * Wraps an ioredis (Redis, Cluster) or node-redis client so that every
 * command given a key built by the generated builders (a Key, with its
 * template) feeds the writer records and the counters; the Key is passed on
 * as its text. Pipelines and transactions (pipeline(), multi()) are wrapped
 * too and recorded when they run. Nothing is refused here.
 *
 *     const r = instrument(new Redis(), { service: "order-team", recorder, metrics });
 *     await r.hset(orderBase(1001), { amount: "99" });
 */
export function instrument<T extends object>(client: T, opts: InstrumentOptions): T {
  if (!opts?.service) throw new TypeError('keyguard: instrument needs the calling service\'s name, e.g. { service: "order-team" }');
  return wrap(client, opts, undefined);
}

const RUN = new Set(["exec", "execAsPipeline", "EXEC"]);
const CHAIN = new Set(["pipeline", "multi", "MULTI"]);

function wrap<T extends object>(target: T, opts: InstrumentOptions, pending: (() => void)[] | undefined): T {
  const proxy: T = new Proxy(target, {
    get(t, prop, receiver) {
      const v = Reflect.get(t, prop, receiver);
      if (typeof prop !== "string" || typeof v !== "function") return v;
      if (CHAIN.has(prop)) {
        return (...args: unknown[]) => wrap(v.apply(t, args), opts, []);
      }
      if (pending && RUN.has(prop)) {
        return async (...args: unknown[]) => {
          const todo = pending.splice(0);
          const r = await v.apply(t, args);
          todo.forEach((f) => f());
          return r;
        };
      }
      const name = prop.toLowerCase();
      const write = WRITES.has(name);
      if (!write && !READS.has(name)) return v;
      return (...args: unknown[]) => {
        const seen: TemplateLike[] = [];
        const plain = args.map((a) => {
          const tm = templateOf(a);
          if (!tm) return a;
          if (!seen.some((s) => s.template === tm.template)) seen.push(tm);
          return (a as { key: string }).key;
        });
        const note = () => tally(opts, seen, write, plain.length > 0);
        const r = v.apply(t, plain);
        if (pending) {
          pending.push(note);
          return r === t ? proxy : r; // chained pipeline calls stay wrapped
        }
        if (r && typeof (r as Promise<unknown>).then === "function") {
          return (r as Promise<unknown>).then((x) => {
            note();
            return x;
          });
        }
        note();
        return r;
      };
    },
  });
  return proxy;
}

function tally(opts: InstrumentOptions, seen: TemplateLike[], write: boolean, hasArgs: boolean): void {
  for (const t of seen) {
    if (write) opts.recorder?.mark(t.template, opts.service);
    opts.metrics?.command(t, opts.service, write);
  }
  if (seen.length === 0 && hasArgs) opts.metrics?.command(undefined, opts.service, write);
}
