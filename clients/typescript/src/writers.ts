import { createHash } from "node:crypto";
import { Executor, executorOf } from "./client";
import type { TemplateLike } from "./guard";

/**
 * Writer records: the same records the Go hook writes, so that `keyguard
 * writers`, `keyguard serve` and the second-writer alert see Node services.
 *
 *     keyguard:{writers}:index      hash  template id -> template text (persistent)
 *     keyguard:{writers}:t:<id>     zset  service -> last write, unix ms; trimmed to the window, TTL = window
 */
export const RECORD_PREFIX = "keyguard:{writers}:";
export const RECORD_INDEX_KEY = RECORD_PREFIX + "index";
export const DEFAULT_FLUSH_EVERY_MS = 10_000;
export const DEFAULT_WINDOW_MS = 24 * 3600_000;

/** The id of a template in the writer records: 16 hex digits of its SHA-256. */
export const templateId = (template: string): string => createHash("sha256").update(template, "utf8").digest("hex").slice(0, 16);

/** The sorted set holding the writers of template. */
export const recordKey = (template: string): string => RECORD_PREFIX + "t:" + templateId(template);

export interface RecorderOptions {
  everyMs?: number;
  windowMs?: number;
  /** Receives flush errors of the background timer. */
  onError?: (err: Error) => void;
}

/**
 * Collects which templates this process's services wrote (mark: an in-memory
 * set insertion) and flushes them to Redis: flush(), or every everyMs after
 * start(). Give it a client of its own.
 */
export class Recorder {
  private readonly x: Executor;
  private readonly everyMs: number;
  private readonly windowMs: number;
  private dirty = new Set<string>();
  private timer?: NodeJS.Timeout;
  lastError?: Error;

  constructor(client: unknown, private readonly opts: RecorderOptions = {}) {
    this.x = executorOf(client);
    this.everyMs = opts.everyMs ?? DEFAULT_FLUSH_EVERY_MS;
    this.windowMs = opts.windowMs ?? DEFAULT_WINDOW_MS;
    if (!(this.windowMs > 0)) throw new TypeError("keyguard: writer-record window must be positive");
  }

  /** Notes that service wrote a key of template (no I/O). */
  mark(template: string, service: string): void {
    if (template && service) this.dirty.add(JSON.stringify([template, service]));
  }

  /** Writes the records marked since the last flush; resolves to their number. On error they are kept. */
  async flush(): Promise<number> {
    if (this.dirty.size === 0) return 0;
    const todo = [...this.dirty].sort();
    this.dirty = new Set();
    const now = Date.now();
    const oldest = "(" + String(now - this.windowMs);
    const cmds = todo.flatMap((m) => {
      const [template, service] = JSON.parse(m) as [string, string];
      const id = templateId(template);
      const key = RECORD_PREFIX + "t:" + id;
      return [
        { key: RECORD_INDEX_KEY, args: ["HSET", RECORD_INDEX_KEY, id, template] },
        { key, args: ["ZADD", key, "GT", String(now), service] }, // a lagging clock never moves it back
        { key, args: ["ZREMRANGEBYSCORE", key, "-inf", oldest] },
        { key, args: ["PEXPIRE", key, String(this.windowMs)] },
      ];
    });
    const rs = await this.x.sendMany(cmds).catch((err: Error) => [{ err }]);
    const failed = rs.find((r) => r.err);
    if (failed) {
      for (const m of todo) this.dirty.add(m);
      this.lastError = failed.err;
      throw new Error(`keyguard: flush writer records (${todo.length}): ${failed.err!.message}; the records are kept for the next flush`);
    }
    return todo.length;
  }

  /** Flushes every everyMs in the background (the timer does not keep the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.flush().catch((e) => this.opts.onError?.(e));
    }, this.everyMs);
    this.timer.unref();
  }

  /** Stops the timer and flushes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

export const METRIC_COMMANDS = "keyguard_commands_total";
export const METRIC_UNREGISTERED = "keyguard_unregistered_total";
export const METRIC_GUARD_CONFLICTS = "keyguard_guard_conflicts_total";
export const TEMPLATE_UNREGISTERED = "unregistered";

type PromClient = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * prom-client counters with the Go hook's names and labels, so the same
 * alert rules apply: keyguard_commands_total{template,owner,service,access},
 * keyguard_unregistered_total{service,access},
 * keyguard_guard_conflicts_total{template,owner}. Pass prom-client itself and
 * optionally a Registry (its default registry otherwise); counters already
 * registered there are reused.
 */
export class Metrics {
  private readonly commands: PromClient;
  private readonly unregistered: PromClient;
  private readonly conflicts: PromClient;

  constructor(promClient: PromClient, registry?: PromClient) {
    const reg = registry ?? promClient.register;
    const counter = (name: string, help: string, labelNames: string[]): PromClient =>
      reg.getSingleMetric(name) ?? new promClient.Counter({ name, help, labelNames, registers: [reg] });
    this.commands = counter(METRIC_COMMANDS, "Redis commands per key template, template owner, calling service and access (read|write).",
      ["template", "owner", "service", "access"]);
    this.unregistered = counter(METRIC_UNREGISTERED, "Redis commands touching keys that match no registered template.", ["service", "access"]);
    this.conflicts = counter(METRIC_GUARD_CONFLICTS, "Namespace guard conflicts: writes refused because another namespace owns the key.",
      ["template", "owner"]);
  }

  command(t: TemplateLike | undefined, service: string, write: boolean): void {
    const access = write ? "write" : "read";
    if (t) this.commands.inc({ template: t.template, owner: t.owner, service, access });
    else this.unregistered.inc({ service, access });
  }

  guardConflict(t: TemplateLike | undefined, owner: string): void {
    this.conflicts.inc({ template: t ? t.template : TEMPLATE_UNREGISTERED, owner });
  }
}
