/**
 * keyguard's runtime for Node services: the namespace guard, the registry's
 * TTL policy and the writer records behind `keyguard writers`, with the same
 * protocol and records as the Go SDK. See README.md.
 */
export { SCRIPT, VERSION } from "./script";
export * from "./errors";
export { Arg, Executor, Settled, executorOf, ioredisExecutor, nodeRedisExecutor } from "./client";
export { Guard, GuardOptions, KeyLike, Result, SCRIPT_SHA, SetOp, TemplateLike, Fields, Value } from "./guard";
export { TTLPolicy, TTLPolicyOptions } from "./ttl";
export {
  Metrics, Recorder, RecorderOptions, RECORD_INDEX_KEY, RECORD_PREFIX, recordKey, templateId,
  METRIC_COMMANDS, METRIC_GUARD_CONFLICTS, METRIC_UNREGISTERED,
} from "./writers";
export { instrument, InstrumentOptions } from "./instrument";
