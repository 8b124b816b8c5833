"""The value format a template declares (registry fields, without
fields_extra: allow): the field names of a hash, or the top-level keys of
the JSON object a string holds. The TTL policy and the guard refuse a write
of a key built by the generated builders that breaks it, before sending
anything (PolicyError, reason "schema"), as the Go SDK's hook does in
enforce mode; keyguard audit reports what got through another way."""
from __future__ import annotations

import json
from typing import Any, Iterable, List, Optional

from .errors import PolicyError

MAX_LISTED = 16
"""The most undeclared fields an error names."""


def _name(f: Any) -> str:
    if isinstance(f, (bytes, bytearray, memoryview)):
        return bytes(f).decode("utf-8", "surrogateescape")
    return str(f)


def _declared(t: Any) -> tuple:
    return tuple(getattr(t, "fields", ()) or ())


def _undeclared(t: Any, names: Iterable[Any]) -> List[str]:
    if getattr(t, "fields_extra", False):
        return []
    declared = set(_declared(t))
    out: List[str] = []
    for f in names:
        n = _name(f)
        if n not in declared and n not in out:
            out.append(n)
            if len(out) == MAX_LISTED:
                break
    return out


def _error(op: str, key: Any, t: Any, undeclared: List[str]) -> PolicyError:
    declared = list(_declared(t))
    if undeclared:
        msg = (f"the template declares the fields {declared}, not {undeclared}; write only declared fields "
               "(the generated constants name them), or add them to the template's fields in the registry")
    else:
        msg = (f"the template's values are JSON objects of the fields {declared} and this value is not one; "
               "write a JSON object of those fields")
    return PolicyError(op, str(key), t.template, "schema", msg, undeclared)


def check_hash(op: str, key: Any, t: Optional[Any], names: Iterable[Any]) -> None:
    """Raises PolicyError when a hash write of the field names breaks the
    fields t declares (t None: a plain key, not checked)."""
    if t is None or getattr(t, "type", "") != "hash" or not _declared(t):
        return
    u = _undeclared(t, names)
    if u:
        raise _error(op, key, t, u)


def _object(value: Any) -> Optional[dict]:
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(value, str):
        return None
    try:
        v = json.loads(value)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def check_json(op: str, key: Any, t: Optional[Any], value: Any) -> None:
    """Raises PolicyError when value, written to a string key of t, is not a
    JSON object of the fields t declares."""
    if t is None or getattr(t, "type", "") != "string" or not _declared(t):
        return
    if isinstance(value, dict):
        raise PolicyError(op, str(key), t.template, "schema",
                          "a dict is not sent as JSON: pass its JSON text, json.dumps(value)", [])
    obj = _object(value)
    if obj is None:
        raise _error(op, key, t, [])
    u = _undeclared(t, obj.keys())
    if u:
        raise _error(op, key, t, u)
