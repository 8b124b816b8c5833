/**
 * What the runtime needs of a Redis client, over ioredis (Redis, Cluster)
 * and node-redis (createClient, createCluster): raw commands, alone and
 * several at once.
 */
export type Arg = string | Buffer | number;

export interface Settled {
  err?: Error;
  value?: unknown;
}

export interface Executor {
  /** Sends one command; key routes it on a Cluster. */
  send(key: string, args: Arg[]): Promise<unknown>;
  /** Sends commands at once (one pipeline where the client allows). */
  sendMany(cmds: { key: string; args: Arg[] }[]): Promise<Settled[]>;
  /** Runs commands on key in one MULTI/EXEC; resolves to their replies. */
  transaction(key: string, cmds: Arg[][]): Promise<unknown[]>;
}

type AnyClient = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const str = (a: Arg): string | Buffer => (typeof a === "number" ? String(a) : a);
// ioredis pipelines take commands by their method names, in lower case.
const lower = (args: Arg[]): (string | Buffer)[] => [String(args[0]).toLowerCase(), ...args.slice(1).map(str)];

/** An Executor over an ioredis Redis or Cluster. */
export function ioredisExecutor(c: AnyClient): Executor {
  return {
    send: (_key, args) => c.call(String(args[0]), ...args.slice(1).map(str)),
    async sendMany(cmds) {
      if (c.isCluster) {
        // ioredis refuses a Cluster pipeline over several slots; its
        // commands go out together anyway (one write per node per tick).
        const rs = await Promise.allSettled(cmds.map((x) => c.call(String(x.args[0]), ...x.args.slice(1).map(str))));
        return rs.map((r) => (r.status === "fulfilled" ? { value: r.value } : { err: r.reason }));
      }
      const rs: [Error | null, unknown][] = await c.pipeline(cmds.map((x) => lower(x.args))).exec();
      return rs.map(([err, value]) => (err ? { err } : { value }));
    },
    async transaction(_key, cmds) {
      const rs: [Error | null, unknown][] | null = await c.multi(cmds.map(lower)).exec();
      if (!rs) throw new Error("keyguard: transaction aborted");
      const bad = rs.find(([err]) => err);
      if (bad) throw bad[0];
      return rs.map(([, v]) => v);
    },
  };
}

/** An Executor over a node-redis client or cluster. */
export function nodeRedisExecutor(c: AnyClient): Executor {
  const cluster = typeof c.getSlotMaster === "function";
  const send = (key: string, args: Arg[]): Promise<unknown> =>
    cluster ? c.sendCommand(key, false, args.map(str)) : c.sendCommand(args.map(str));
  return {
    send,
    async sendMany(cmds) {
      // node-redis pipelines the commands of one tick on each connection.
      const rs = await Promise.allSettled(cmds.map((x) => send(x.key, x.args)));
      return rs.map((r) => (r.status === "fulfilled" ? { value: r.value } : { err: r.reason }));
    },
    async transaction(key, cmds) {
      const m = cluster ? c.multi(key) : c.multi();
      for (const a of cmds) {
        if (cluster) m.addCommand(key, a.map(str));
        else m.addCommand(a.map(str));
      }
      const rs: unknown[] = await m.exec();
      const bad = rs.find((r) => r instanceof Error);
      if (bad) throw bad;
      return rs;
    },
  };
}

/** The Executor of an ioredis or node-redis client, or of an Executor. */
export function executorOf(c: AnyClient): Executor {
  if (c == null) {
    throw new TypeError("keyguard: no Redis client; pass an ioredis Redis/Cluster or a node-redis client/cluster");
  }
  if (typeof c.send === "function" && typeof c.sendMany === "function") return c as Executor;
  if (typeof c.call === "function" && typeof c.pipeline === "function") return ioredisExecutor(c);
  if (typeof c.sendCommand === "function" && typeof c.hGetAll === "function") return nodeRedisExecutor(c);
  throw new TypeError("keyguard: unknown Redis client; pass an ioredis Redis/Cluster, a node-redis client/cluster, or an Executor");
}

/** A reply as text (node-redis and ioredis give strings; Buffers when asked). */
export function text(v: unknown): string {
  return Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
}
