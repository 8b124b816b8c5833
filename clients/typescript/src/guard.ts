import { createHash, randomInt } from "node:crypto";
import { Arg, Executor, executorOf, text } from "./client";
import {
  ConflictError, ForeignOwnerError, KeyguardError, RESERVED_FIELD, ReservedFieldError, WrongTypeError,
  isNoScript, isWrongType, scriptError,
} from "./errors";
import { checkHash } from "./fields";
import { SCRIPT } from "./script";
import type { Metrics, Recorder } from "./writers";

/** The SHA-1 digest EVALSHA uses for SCRIPT; the same in every language. */
export const SCRIPT_SHA = createHash("sha1").update(SCRIPT, "utf8").digest("hex");

/** The template a key built by the generated builders (keyguard gen --lang ts) carries. */
export interface TemplateLike {
  readonly template: string;
  readonly owner: string;
  readonly type: string;
  readonly ttlMs: number;
  readonly ttlJitterMs: number;
  readonly persistent: boolean;
  /** The declared fields of the value (hash fields or JSON top-level keys); absent or empty when the registry declares none. */
  readonly fields?: readonly string[];
  /** Whether a value may hold fields beyond fields (fields_extra: allow). */
  readonly fieldsExtra?: boolean;
}

/** A key: a string, or a Key of the generated builders. */
export type KeyLike = string | { readonly key: string; readonly template: TemplateLike };

export const keyText = (k: KeyLike): string => (typeof k === "string" ? k : k.key);
export const templateOf = (k: unknown): TemplateLike | undefined =>
  k !== null && typeof k === "object" && typeof (k as any).key === "string" && typeof (k as any).template?.template === "string"
    ? (k as any).template
    : undefined;

/** What one guarded write did. */
export interface Result {
  added: number; // fields that did not exist before
  updated: number; // existing fields overwritten
  claimed: boolean; // the key had no owner and is now ours
  adopted: boolean; // claimed, and the hash existed without an owner
  ttlSet: boolean; // this write set the key's TTL (it had none)
}

export type Value = string | number | Buffer;
export type Fields = Record<string, Value> | Map<string, Value>;

export interface GuardOptions {
  /** The namespace writing, e.g. "order-service:order". */
  owner: string;
  /** TTL in ms, given to a key without TTL; later writes never renew it. */
  ttl?: number;
  /** A random extra of up to this many ms per write. */
  jitter?: number;
  /** Never give a TTL (registry persistent: true). */
  persistent?: boolean;
  /** The service named in writer records and metrics; the owner by default. */
  service?: string;
  recorder?: Recorder;
  metrics?: Metrics;
}

export interface SetOp {
  key: KeyLike;
  fields: Fields;
  ttl?: number;
}

export function validNamespace(ns: string): void {
  if (typeof ns !== "string" || ns === "") throw new TypeError('keyguard: empty namespace; name the owner such as "order-service:order"');
  if (ns === RESERVED_FIELD) throw new TypeError(`keyguard: the namespace cannot be the reserved field name ${RESERVED_FIELD}`);
  if (Buffer.byteLength(ns) > 200) throw new TypeError(`keyguard: namespace of ${Buffer.byteLength(ns)} bytes; keep it under 200`);
  for (let i = 0; i < ns.length; i++) {
    const c = ns.charCodeAt(i);
    if (c <= 0x20 || c > 0x7e) throw new TypeError(`keyguard: namespace character ${JSON.stringify(ns[i])} at ${i}; use printable ASCII without spaces`);
  }
}

/**
 * Writes and reads hashes owned by one namespace with the guard's script:
 * a write claims a key without owner, rejects with ForeignOwnerError when
 * another namespace owns it (WrongTypeError when it is not a hash), and sets
 * the TTL only when the key has none.
 *
 *     const g = new Guard(new Redis(), { owner: "order-service:order", ttl: 3_600_000 });
 *     await g.hset("order:order:1001:base", { amount: "99" });
 */
export class Guard {
  readonly owner: string;
  readonly service: string;
  private readonly x: Executor;
  private readonly opts: GuardOptions;

  constructor(client: unknown, opts: GuardOptions) {
    validNamespace(opts?.owner);
    const { ttl, jitter, persistent } = opts;
    if (persistent && (ttl || jitter)) throw new TypeError("keyguard: persistent with a TTL or jitter; a persistent key gets no TTL");
    if (ttl !== undefined && !(Number.isInteger(ttl) && ttl >= 1)) throw new TypeError(`keyguard: TTL ${ttl}; give whole milliseconds, at least 1, or persistent: true`);
    if (jitter !== undefined && !(Number.isInteger(jitter) && jitter >= 0)) throw new TypeError(`keyguard: jitter ${jitter}; give whole milliseconds`);
    this.x = executorOf(client);
    this.owner = opts.owner;
    this.service = opts.service ?? opts.owner;
    this.opts = opts;
  }

  private ttlArg(key: KeyLike, ttl: number | undefined): number {
    const k = keyText(key);
    if (ttl !== undefined) {
      if (this.opts.persistent) throw new TypeError(`keyguard: set ${JSON.stringify(k)}: a TTL on a persistent guard; drop ttl`);
      if (!(Number.isInteger(ttl) && ttl >= 1)) throw new TypeError(`keyguard: set ${JSON.stringify(k)}: TTL ${ttl}; give whole milliseconds, at least 1`);
      return ttl;
    }
    if (this.opts.persistent) return 0;
    if (this.opts.ttl) return this.opts.ttl + (this.opts.jitter ? randomInt(this.opts.jitter + 1) : 0);
    const t = templateOf(key);
    if (t) {
      if (t.persistent) return 0;
      if (t.ttlMs > 0) return t.ttlMs + (t.ttlJitterMs > 0 ? randomInt(Math.floor(t.ttlJitterMs) + 1) : 0);
    }
    throw new TypeError(`keyguard: set ${JSON.stringify(k)}: no TTL: give the Guard a ttl (or persistent: true), pass { ttl }, ` +
      "or build the key with the generated builders of a template that has one");
  }

  private setArgs(key: KeyLike, fields: Fields, ttl: number | undefined): Arg[] {
    const entries = fields instanceof Map ? [...fields.entries()] : Object.entries(fields ?? {});
    if (entries.length === 0) throw new TypeError(`keyguard: set ${JSON.stringify(keyText(key))}: no fields given; pass at least one field`);
    const args: Arg[] = ["EVALSHA", SCRIPT_SHA, "1", keyText(key), "set", this.owner, String(this.ttlArg(key, ttl))];
    for (const [f, v] of entries) {
      if (f === RESERVED_FIELD) throw new ReservedFieldError();
      args.push(f, typeof v === "number" ? String(v) : v);
    }
    checkHash("set", keyText(key), templateOf(key), entries.map(([f]) => f));
    return args;
  }

  private async evalsha(key: string, args: Arg[]): Promise<unknown> {
    try {
      return await this.x.send(key, args);
    } catch (e) {
      if (!isNoScript(e)) throw e;
    }
    return this.x.send(key, ["EVAL", SCRIPT, ...args.slice(2)]); // lost by SCRIPT FLUSH, a restart, a failover
  }

  private parseSet(key: KeyLike, reply: unknown): Result {
    if (!Array.isArray(reply) || reply.length !== 4) {
      throw new KeyguardError(`keyguard: set ${JSON.stringify(keyText(key))}: unexpected script reply ${JSON.stringify(reply)}; is the server running the guard script ${SCRIPT_SHA}?`);
    }
    const n = reply.map(Number);
    this.observe(key);
    return { added: n[0], updated: n[1], claimed: n[2] !== 0, adopted: n[2] === 2, ttlSet: n[3] === 1 };
  }

  private fail(op: string, key: KeyLike, e: unknown): unknown {
    const err = scriptError(e, op, keyText(key), this.owner);
    if (!err) return e;
    this.observe(key, err);
    return err;
  }

  private observe(key: KeyLike, err?: Error): void {
    const t = templateOf(key);
    if (!err) {
      if (t && this.opts.recorder) this.opts.recorder.mark(t.template, this.service);
      this.opts.metrics?.command(t, this.service, true);
    } else if (err instanceof ForeignOwnerError) {
      this.opts.metrics?.guardConflict(t, err.owner); // as the Go hook: owner conflicts, by the owner found
    }
  }

  /** Writes one field; see hset. */
  set(key: KeyLike, field: string, value: Value, opts: { ttl?: number } = {}): Promise<Result> {
    return this.hset(key, { [field]: value }, opts);
  }

  /** Writes fields to the hash at key in one atomic step (see the class). */
  async hset(key: KeyLike, fields: Fields, opts: { ttl?: number } = {}): Promise<Result> {
    const args = this.setArgs(key, fields, opts.ttl);
    try {
      return this.parseSet(key, await this.evalsha(keyText(key), args));
    } catch (e) {
      if (e instanceof KeyguardError) throw e;
      throw this.fail("set", key, e);
    }
  }

  /**
   * Runs the writes together (one pipeline on ioredis; node-redis pipelines
   * the commands of one tick), each atomic on its own, the batch not.
   * Resolves to one Result or Error per op, in order. Ops answered NOSCRIPT
   * did not run: they are sent again with EVAL.
   */
  async hsetMany(ops: SetOp[]): Promise<(Result | Error)[]> {
    const out: (Result | Error)[] = new Array(ops.length);
    const args: (Arg[] | undefined)[] = ops.map((op, i) => {
      try {
        return this.setArgs(op.key, op.fields, op.ttl);
      } catch (e) {
        out[i] = e as Error;
        return undefined;
      }
    });
    let todo = ops.map((_, i) => i).filter((i) => args[i]);
    let replies = await this.x.sendMany(todo.map((i) => ({ key: keyText(ops[i].key), args: args[i]! })));
    const byIndex = new Map(todo.map((i, j) => [i, replies[j]]));
    const retry = todo.filter((i) => byIndex.get(i)!.err && isNoScript(byIndex.get(i)!.err));
    if (retry.length > 0) {
      replies = await this.x.sendMany(retry.map((i) => ({ key: keyText(ops[i].key), args: ["EVAL", SCRIPT, ...args[i]!.slice(2)] })));
      retry.forEach((i, j) => byIndex.set(i, replies[j]));
    }
    for (const i of todo) {
      const r = byIndex.get(i)!;
      if (r.err) {
        out[i] = this.fail("set", ops[i].key, r.err) as Error;
      } else {
        try {
          out[i] = this.parseSet(ops[i].key, r.value);
        } catch (e) {
          out[i] = e as Error;
        }
      }
    }
    return out;
  }

  private async readErr(op: string, key: KeyLike, e: unknown): Promise<unknown> {
    if (!isWrongType(e)) return e;
    const k = keyText(key);
    const err = new WrongTypeError(k, text(await this.x.send(k, ["TYPE", k])), this.owner, op);
    this.observe(key, err);
    return err;
  }

  private ownerConflict(op: string, key: KeyLike, owner: unknown): ConflictError | undefined {
    if (owner === null || owner === undefined || text(owner) === this.owner) return undefined;
    const err = new ForeignOwnerError(keyText(key), text(owner), this.owner, op);
    this.observe(key, err);
    return err;
  }

  /** One field (HMGET of the owner field and the field), or null; rejects on another namespace's key. */
  async get(key: KeyLike, field: string): Promise<string | null> {
    if (field === RESERVED_FIELD) throw new ReservedFieldError();
    const k = keyText(key);
    let r: unknown;
    try {
      r = await this.x.send(k, ["HMGET", k, RESERVED_FIELD, field]);
    } catch (e) {
      throw await this.readErr("get", key, e);
    }
    const [owner, value] = r as unknown[];
    const err = this.ownerConflict("get", key, owner);
    if (err) throw err;
    return value === null || value === undefined ? null : text(value);
  }

  /** The business fields (HGETALL, the owner field checked and removed). */
  async getAll(key: KeyLike): Promise<Record<string, string>> {
    const k = keyText(key);
    let r: unknown;
    try {
      r = await this.x.send(k, ["HGETALL", k]);
    } catch (e) {
      throw await this.readErr("getall", key, e);
    }
    const out: Record<string, string> = {};
    // Raw HGETALL is a flat array; some clients give an object.
    const pairs: [unknown, unknown][] = Array.isArray(r) ? r.flatMap((v, i) => (i % 2 === 0 ? [[v, r[i + 1]]] : [])) as any : Object.entries(r as object);
    for (const [f, v] of pairs) {
      if (text(f) === RESERVED_FIELD) {
        const err = this.ownerConflict("getall", key, v);
        if (err) throw err;
        continue;
      }
      out[text(f)] = text(v);
    }
    return out;
  }

  /** The namespace owning key, or null when it does not exist or has none. */
  async ownerOf(key: KeyLike): Promise<string | null> {
    const k = keyText(key);
    try {
      const v = await this.x.send(k, ["HGET", k, RESERVED_FIELD]);
      return v === null || v === undefined ? null : text(v);
    } catch (e) {
      throw await this.readErr("owner", key, e);
    }
  }

  /** Deletes key when it is ours or has no owner (one atomic step). */
  async delete(key: KeyLike): Promise<boolean> {
    const k = keyText(key);
    try {
      return Number(await this.evalsha(k, ["EVALSHA", SCRIPT_SHA, "1", k, "del", this.owner])) === 1;
    } catch (e) {
      throw this.fail("delete", key, e);
    }
  }

  /** DEL whoever owns the key: for an operator who confirmed the ownership. */
  async forceDelete(key: KeyLike): Promise<boolean> {
    const k = keyText(key);
    return Number(await this.x.send(k, ["DEL", k])) === 1;
  }

  /**
   * EXPIRE key seconds NX: a TTL only when the key has none, so a writer that
   * does not own the key never changes the owner's lifecycle. ttl in ms,
   * rounded down to whole seconds, at least 1.
   */
  async expireNX(key: KeyLike, ttl: number): Promise<boolean> {
    const k = keyText(key);
    return Number(await this.x.send(k, ["EXPIRE", k, String(Math.max(1, Math.floor(ttl / 1000))), "NX"])) === 1;
  }
}
