import { randomInt } from "node:crypto";
import { Arg, Executor, executorOf } from "./client";
import { PolicyError } from "./errors";
import { checkHash, checkJSON } from "./fields";
import { KeyLike, TemplateLike, keyText, templateOf, Value } from "./guard";
import type { Metrics, Recorder } from "./writers";

export interface TTLPolicyOptions {
  service?: string;
  recorder?: Recorder;
  metrics?: Metrics;
}

/**
 * The registry's TTL policy for keys built by the generated builders
 * (keyguard gen --lang ts): a key of a TTL template is always written with
 * its TTL (plus a random jitter when the template has ttl_jitter), a key of a
 * persistent template never gets one, and nothing here writes a TTL
 * template's key without a TTL. Every write (re)sets the TTL, as SET … PX
 * does; the namespace guard sets it once instead. A template that declares
 * its fields (registry fields, without fields_extra: allow) is written with
 * them alone: set and hset refuse a value that is not a JSON object of the
 * declared fields, or a hash field not declared (PolicyError, reason
 * "schema"), before sending anything; exec's commands are not checked.
 */
export class TTLPolicy {
  private readonly x: Executor;

  constructor(client: unknown, private readonly opts: TTLPolicyOptions = {}) {
    this.x = executorOf(client);
  }

  private entry(op: string, key: KeyLike, typ: string): TemplateLike {
    const t = templateOf(key);
    const k = keyText(key);
    if (!t) throw new PolicyError(op, k, "", "unregistered", "the key carries no template; build it with the generated builders (keyguard gen --lang ts)");
    if (!t.persistent && !(t.ttlMs > 0)) throw new PolicyError(op, k, t.template, "no-policy", "the template has no TTL policy; give it a ttl, or persistent: true if the key must never expire");
    if (typ && t.type && t.type !== typ) throw new PolicyError(op, k, t.template, "type", `the template declares type ${t.type}; use the helper for that type (exec works for any command)`);
    return t;
  }

  /** The TTL in ms a write gives key (jitter drawn); 0 for a persistent template. */
  ttlMs(key: KeyLike): number {
    return this.ttl(this.entry("ttl", key, ""));
  }

  private ttl(t: TemplateLike): number {
    if (t.persistent) return 0;
    return t.ttlMs + (t.ttlJitterMs > 0 ? randomInt(Math.floor(t.ttlJitterMs) + 1) : 0);
  }

  private observe(key: KeyLike): void {
    const t = templateOf(key);
    if (t && this.opts.service) {
      this.opts.recorder?.mark(t.template, this.opts.service);
      this.opts.metrics?.command(t, this.opts.service, true);
    }
  }

  /** SET key value PX ttl (no PX for a persistent template). */
  async set(key: KeyLike, value: Value): Promise<void> {
    const t = this.entry("set", key, "string");
    const k = keyText(key);
    checkJSON("set", k, t, value);
    const ttl = this.ttl(t);
    await this.x.send(k, ttl > 0 ? ["SET", k, value, "PX", String(ttl)] : ["SET", k, value]);
    this.observe(key);
  }

  /** HSET and the template's PEXPIRE in one MULTI/EXEC; resolves to the fields added. */
  async hset(key: KeyLike, fields: Record<string, Value>): Promise<number> {
    const k = keyText(key);
    checkHash("hset", k, this.entry("hset", key, "hash"), Object.keys(fields));
    const args: Arg[] = ["HSET", k];
    for (const [f, v] of Object.entries(fields)) args.push(f, typeof v === "number" ? String(v) : v);
    const [added] = await this.exec(key, [args], "hash");
    return Number(added);
  }

  /** PEXPIRE key ttl; refused on a persistent template. */
  async expire(key: KeyLike): Promise<boolean> {
    const t = this.entry("expire", key, "");
    if (t.persistent) throw new PolicyError("expire", keyText(key), t.template, "persistent", "the template is persistent: its keys never get a TTL");
    const k = keyText(key);
    return Number(await this.x.send(k, ["PEXPIRE", k, String(this.ttl(t))])) === 1;
  }

  /** Always refused on a TTL template: its keys must not lose their TTL. */
  persist(key: KeyLike): never {
    const t = this.entry("persist", key, "");
    throw new PolicyError("persist", keyText(key), t.template, "persistent",
      t.persistent ? "the template is persistent: its keys have no TTL to remove" : "the template has a TTL; a persistent write would keep the key forever");
  }

  /**
   * Runs cmds (raw commands on key, e.g. [["SADD", k, "a"]]) and PEXPIRE key
   * ttl in one MULTI/EXEC; resolves to the replies of cmds.
   */
  async exec(key: KeyLike, cmds: Arg[][], typ = ""): Promise<unknown[]> {
    const t = this.entry("exec", key, typ);
    const ttl = this.ttl(t);
    const k = keyText(key);
    const rs = await this.x.transaction(k, [...cmds, ...(ttl > 0 ? [["PEXPIRE", k, String(ttl)]] : [])]);
    this.observe(key);
    return rs.slice(0, cmds.length);
  }
}
