import { PolicyError } from "./errors";
import type { TemplateLike } from "./guard";

/**
 * The value format a template declares (registry fields, without
 * fields_extra: allow): the field names of a hash, or the top-level keys of
 * the JSON object a string holds. The TTL policy and the guard refuse a
 * write of a key built by the generated builders that breaks it, before
 * sending anything (PolicyError, reason "schema"), as the Go SDK's hook does
 * in enforce mode; keyguard audit reports what got through another way.
 */

/** The most undeclared fields an error names. */
export const MAX_LISTED = 16;

const declaredOf = (t: TemplateLike): readonly string[] => t.fields ?? [];

function undeclared(t: TemplateLike, names: Iterable<string>): string[] {
  if (t.fieldsExtra) return [];
  const declared = new Set(declaredOf(t));
  const out: string[] = [];
  for (const n of names) {
    if (!declared.has(n) && !out.includes(n)) {
      out.push(n);
      if (out.length === MAX_LISTED) break;
    }
  }
  return out;
}

function schemaError(op: string, key: string, t: TemplateLike, u: string[]): PolicyError {
  const declared = JSON.stringify(declaredOf(t));
  const msg = u.length > 0
    ? `the template declares the fields ${declared}, not ${JSON.stringify(u)}; write only declared fields ` +
      "(the generated constants name them), or add them to the template's fields in the registry"
    : `the template's values are JSON objects of the fields ${declared} and this value is not one; write a JSON object of those fields`;
  return new PolicyError(op, key, t.template, "schema", msg, u);
}

/** Throws PolicyError when a hash write of the field names breaks the fields t declares (t undefined: a plain key, not checked). */
export function checkHash(op: string, key: string, t: TemplateLike | undefined, names: Iterable<string>): void {
  if (!t || t.type !== "hash" || declaredOf(t).length === 0) return;
  const u = undeclared(t, names);
  if (u.length > 0) throw schemaError(op, key, t, u);
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  let s: string;
  if (typeof value === "string") s = value;
  else if (Buffer.isBuffer(value)) {
    try {
      s = new TextDecoder("utf-8", { fatal: true }).decode(value);
    } catch {
      return undefined;
    }
  } else return undefined;
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    return undefined;
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Throws PolicyError when value, written to a string key of t, is not a JSON object of the fields t declares. */
export function checkJSON(op: string, key: string, t: TemplateLike | undefined, value: unknown): void {
  if (!t || t.type !== "string" || declaredOf(t).length === 0) return;
  const obj = objectOf(value);
  if (!obj) throw schemaError(op, key, t, []);
  const u = undeclared(t, Object.keys(obj));
  if (u.length > 0) throw schemaError(op, key, t, u);
}
