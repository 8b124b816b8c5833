// Test driver of the interop checks (clients/interop_test.go): reads one JSON
// request per line on stdin, runs it with this package on ioredis or
// node-redis, writes one JSON reply per line on stdout. Not part of the package.
"use strict";
const readline = require("node:readline");
const path = require("node:path");
const kg = require(process.env.KEYGUARD_TS_DIST || "..");

const argv = process.argv.slice(2);
const flag = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const addrs = flag("--addrs").split(",");
const cluster = argv.includes("--cluster");
const lib = flag("--client") || "ioredis";
const keysPath = flag("--keys");
const keys = keysPath ? require(path.resolve(keysPath)) : undefined;

async function connect() {
  const nodes = addrs.map((a) => {
    const i = a.lastIndexOf(":");
    return { host: a.slice(0, i), port: Number(a.slice(i + 1)) };
  });
  if (lib === "ioredis") {
    const Redis = require("ioredis");
    const c = cluster ? new Redis.Cluster(nodes) : new Redis(nodes[0]);
    if (cluster) await new Promise((ok) => c.once("ready", ok));
    return c;
  }
  const redis = require("redis");
  const c = cluster
    ? redis.createCluster({ rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })) })
    : redis.createClient({ url: `redis://${nodes[0].host}:${nodes[0].port}` });
  c.on("error", () => {});
  await c.connect();
  return c;
}

const result = (r) => ({ added: r.added, updated: r.updated, claimed: r.claimed, adopted: r.adopted, ttl_set: r.ttlSet });
function error(e) {
  if (e instanceof kg.ForeignOwnerError) return { kind: "conflict", key: e.key, owner: e.owner, caller: e.caller, message: e.message };
  if (e instanceof kg.WrongTypeError) return { kind: "wrongtype", key: e.key, found_type: e.foundType, caller: e.caller, message: e.message };
  if (e instanceof kg.ReservedFieldError) return { kind: "reserved", message: e.message };
  if (e instanceof kg.PolicyError) return { kind: "policy", reason: e.reason, undeclared: e.undeclared, message: e.message };
  return { kind: "other", message: `${e && e.name}: ${e && e.message}` };
}

function build(req) {
  for (const v of Object.values(keys)) {
    if (v && typeof v === "object" && v.template === req.template && Array.isArray(v.parts)) return keys.build(v, ...req.values);
  }
  throw new Error("no template " + req.template);
}

async function bench(client, req) {
  const { n, prefix } = req;
  const g = new kg.Guard(client, { owner: "bench:ts", ttl: 3600_000 });
  const x = kg.executorOf(client);
  let plain = 0n, guarded = 0n;
  for (let rnd = 0; rnd < 4; rnd++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const k = `${prefix}:plain:${i % 100}`;
      await x.send(k, ["HSET", k, "f", "v"]);
    }
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await g.hset(`${prefix}:guarded:${i % 100}`, { f: "v" });
    const t2 = process.hrtime.bigint();
    if (rnd > 0) {
      plain += t1 - t0;
      guarded += t2 - t1;
    }
  }
  return { plain_ns: Number(plain) / (3 * n), guarded_ns: Number(guarded) / (3 * n) };
}

async function main() {
  const client = await connect();
  const recClient = await connect();
  const prom = require("prom-client");
  const registry = new prom.Registry();
  const metrics = new kg.Metrics(prom, registry);
  const recorder = new kg.Recorder(recClient);
  const guards = new Map();
  const guard = (req) => {
    const k = JSON.stringify([req.owner, req.guard_ttl_ms ?? null]);
    if (!guards.has(k)) {
      guards.set(k, new kg.Guard(client, { owner: req.owner, ttl: req.guard_ttl_ms, service: req.service, recorder, metrics }));
    }
    return guards.get(k);
  };
  const ttl = (req) => (req.ttl_ms === undefined || req.ttl_ms === null ? {} : { ttl: req.ttl_ms });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const req = JSON.parse(line);
    let reply;
    try {
      let out;
      switch (req.op) {
        case "hset":
          out = result(await guard(req).hset(req.template ? build(req) : req.key, req.fields, ttl(req)));
          break;
        case "get":
          out = { value: await guard(req).get(req.key, req.field) };
          break;
        case "getall":
          out = { fields: await guard(req).getAll(req.key) };
          break;
        case "owner":
          out = { owner: await guard(req).ownerOf(req.key) };
          break;
        case "delete":
          out = { deleted: await guard(req).delete(req.key) };
          break;
        case "force_delete":
          out = { deleted: await guard(req).forceDelete(req.key) };
          break;
        case "expire_nx":
          out = { set: await guard(req).expireNX(req.key, req.ttl_ms) };
          break;
        case "batch": {
          const rs = await guard(req).hsetMany(req.ops.map((o) => ({ key: o.key, fields: o.fields, ttl: req.ttl_ms })));
          out = { results: rs.map((r) => (r instanceof Error ? { err: error(r) } : { ok: result(r) })) };
          break;
        }
        case "write": {
          const r = kg.instrument(client, { service: req.service, recorder, metrics });
          const hset = lib === "ioredis" ? "hset" : "hSet";
          if (req.pipeline) {
            const p = lib === "ioredis" ? r.pipeline() : r.multi();
            p[hset](build(req), req.fields);
            await (lib === "ioredis" ? p.exec() : p.execAsPipeline());
          } else {
            await r[hset](build(req), req.fields);
          }
          out = {};
          break;
        }
        case "policy": {
          const p = new kg.TTLPolicy(client);
          const key = req.template ? build(req) : req.key;
          if (req.how === "hset") out = { added: await p.hset(key, req.fields) };
          else if (req.how === "set") out = (await p.set(key, req.value), {});
          else if (req.how === "expire") out = { set: await p.expire(key) };
          else out = p.persist(key);
          break;
        }
        case "flush":
          out = { records: await recorder.flush() };
          break;
        case "metrics":
          out = { text: await registry.metrics() };
          break;
        case "bench":
          out = await bench(client, req);
          break;
        case "version":
          out = { version: kg.VERSION, sha: kg.SCRIPT_SHA };
          break;
        default:
          throw new Error("unknown op " + req.op);
      }
      reply = { id: req.id, ok: out };
    } catch (e) {
      reply = { id: req.id, err: error(e) };
    }
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
  await client.quit();
  await recClient.quit();
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack) + "\n");
  process.exit(1);
});
