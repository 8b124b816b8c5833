/** The hash field holding the owner's namespace; never a business field. */
export const RESERVED_FIELD = "__ns__";

/** Base class of the errors of this package. Nothing was written when one is thrown. */
export class KeyguardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyguardError";
  }
}

/**
 * The guarded key belongs to another namespace (ForeignOwnerError) or holds
 * another type (WrongTypeError). Retrying cannot help. caller is the
 * namespace that was refused (ours).
 */
export class ConflictError extends KeyguardError {
  constructor(message: string, readonly key: string, readonly caller: string, readonly op: string) {
    super(message);
    this.name = "ConflictError";
  }
}

/** Another namespace owns the key: owner is the namespace found in its reserved field. */
export class ForeignOwnerError extends ConflictError {
  constructor(key: string, readonly owner: string, caller: string, op = "set") {
    super(
      `keyguard: ${op} ${JSON.stringify(key)} by namespace ${JSON.stringify(caller)} refused: the key belongs to namespace ${JSON.stringify(owner)} ` +
        "(two services build the same key; give one of them its own key template)",
      key, caller, op);
    this.name = "ForeignOwnerError";
  }
}

/** The key exists and is not a hash: foundType is the Redis type found. */
export class WrongTypeError extends ConflictError {
  constructor(key: string, readonly foundType: string, caller: string, op = "set") {
    super(
      `keyguard: ${op} ${JSON.stringify(key)} by namespace ${JSON.stringify(caller)} refused: the key holds a ${foundType}, not a guarded hash ` +
        "(another writer stores a different type under this key; give one of them another key template)",
      key, caller, op);
    this.name = "WrongTypeError";
  }
}

/** A business field named like the reserved owner field. */
export class ReservedFieldError extends KeyguardError {
  constructor() {
    super(`keyguard: field name ${RESERVED_FIELD} is reserved for the owner namespace; rename the business field`);
    this.name = "ReservedFieldError";
  }
}

/**
 * A write the TTL policy refuses (the guard too, for reason "schema"): reason
 * is "unregistered", "no-policy", "type", "persistent" or "schema" (the value
 * breaks the fields the template declares; undeclared lists the fields it
 * names that the template does not declare, empty when the value is not a
 * JSON object). Nothing was sent.
 */
export class PolicyError extends KeyguardError {
  constructor(readonly op: string, readonly key: string, readonly template: string, readonly reason: string, message: string,
    readonly undeclared: readonly string[] = []) {
    super(`keyguard: ${op} ${JSON.stringify(key)}${template ? ` (template ${JSON.stringify(template)})` : ""}: ${message}`);
    this.name = "PolicyError";
  }
}

/** Decodes "owner=<ns>" or "owner_hex=<hex>[ truncated]" of a conflict reply. */
export function decodeOwner(s: string): string {
  if (s.startsWith("owner=")) return s.slice(6);
  if (!s.startsWith("owner_hex=")) return s;
  let v = s.slice(10);
  const truncated = v.endsWith(" truncated");
  if (truncated) v = v.slice(0, -10);
  if (!/^([0-9a-f]{2})*$/.test(v)) return s;
  const text = Buffer.from(v, "hex").toString("utf8");
  return truncated ? text + "…(truncated)" : text;
}

const reply = /^KEYGUARD_(CONFLICT|WRONGTYPE|RESERVED|ARGS)(?: (.*))?$/s;

/** The typed error of one of the script's error replies, or undefined. */
export function scriptError(err: unknown, op: string, key: string, caller: string): KeyguardError | undefined {
  const m = reply.exec(errorText(err));
  if (!m) return undefined;
  const rest = m[2] ?? "";
  switch (m[1]) {
    case "CONFLICT":
      return new ForeignOwnerError(key, decodeOwner(rest), caller, op);
    case "WRONGTYPE":
      return new WrongTypeError(key, rest.startsWith("type=") ? rest.slice(5) : rest, caller, op);
    case "RESERVED":
      return new ReservedFieldError();
  }
  return new KeyguardError(`keyguard: ${op} ${JSON.stringify(key)}: ${m[0]}`);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const isNoScript = (err: unknown): boolean => errorText(err).startsWith("NOSCRIPT");
export const isWrongType = (err: unknown): boolean => errorText(err).startsWith("WRONGTYPE");
