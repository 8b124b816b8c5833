"""Errors of the keyguard runtime. Nothing was written when one is raised."""
from __future__ import annotations

import re
from typing import List, Optional

RESERVED_FIELD = "__ns__"
"""The hash field holding the owner's namespace; never a business field."""


class KeyguardError(Exception):
    """Base class of the errors raised by the keyguard package."""


class ConflictError(KeyguardError):
    """The guarded key belongs to another namespace, or holds another type.
    Retrying cannot help. key is the guarded key, caller the namespace that
    was refused (ours), op the guard operation ("set", "get", "getall",
    "owner", "delete")."""

    def __init__(self, message: str, key: str, caller: str, op: str) -> None:
        super().__init__(message)
        self.key = key
        self.caller = caller
        self.op = op


class ForeignOwnerError(ConflictError):
    """Another namespace owns the key: owner is the namespace found in its
    reserved field, caller ours."""

    def __init__(self, key: str, owner: str, caller: str, op: str = "set") -> None:
        super().__init__(
            f"keyguard: {op} {key!r} by namespace {caller!r} refused: the key belongs to namespace {owner!r} "
            "(two services build the same key; give one of them its own key template)",
            key, caller, op)
        self.owner = owner


class WrongTypeError(ConflictError):
    """The key exists and is not a hash: another writer stores a different
    type under it. found_type is the Redis type found ("string", ...)."""

    def __init__(self, key: str, found_type: str, caller: str, op: str = "set") -> None:
        super().__init__(
            f"keyguard: {op} {key!r} by namespace {caller!r} refused: the key holds a {found_type}, not a guarded hash "
            "(another writer stores a different type under this key; give one of them another key template)",
            key, caller, op)
        self.owner = None
        self.found_type = found_type


class ReservedFieldError(KeyguardError, ValueError):
    """A business field is named like the reserved owner field."""

    def __init__(self) -> None:
        super().__init__(f"keyguard: field name {RESERVED_FIELD} is reserved for the owner namespace; rename the business field")


class PolicyError(KeyguardError, ValueError):
    """A write the TTL policy refuses (see keyguard.ttl). reason is
    "unregistered", "no-policy", "type", "persistent" or "schema" (the value
    breaks the fields the template declares: undeclared lists the fields it
    names that the template does not declare, empty when the value is not a
    JSON object; the guard raises it too, see keyguard.fields)."""

    def __init__(self, op: str, key: str, template: str, reason: str, message: str,
                 undeclared: Optional[List[str]] = None) -> None:
        where = f" (template {template!r})" if template else ""
        super().__init__(f"keyguard: {op} {key!r}{where}: {message}")
        self.op = op
        self.key = key
        self.template = template
        self.reason = reason
        self.undeclared: List[str] = list(undeclared or [])


_REPLY = re.compile(r"KEYGUARD_(CONFLICT|WRONGTYPE|RESERVED|ARGS)( .*)?$", re.S)


def decode_owner(s: str) -> str:
    """Decodes "owner=<ns>" or "owner_hex=<hex>[ truncated]" of a conflict reply."""
    if s.startswith("owner="):
        return s[len("owner="):]
    if not s.startswith("owner_hex="):
        return s
    v = s[len("owner_hex="):]
    truncated = v.endswith(" truncated")
    if truncated:
        v = v[: -len(" truncated")]
    try:
        b = bytes.fromhex(v)
    except ValueError:
        return s
    text = b.decode("utf-8", "surrogateescape")
    return text + "…(truncated)" if truncated else text


def script_error(exc: BaseException, op: str, key: str, caller: str) -> Optional[KeyguardError]:
    """The typed error for one of the script's error replies, else None.
    redis-py prefixes errors inside pipelines ("Command # 1 (...) of pipeline
    caused error: ..."), so the reply is read after that prefix."""
    msg = str(exc)
    cut = msg.rfind("caused error: ")
    if cut >= 0:
        msg = msg[cut + len("caused error: "):]
    m = _REPLY.match(msg)
    if m is None:
        return None
    kind, rest = m.group(1), (m.group(2) or "").strip()
    if kind == "CONFLICT":
        return ForeignOwnerError(key, decode_owner(rest), caller, op)
    if kind == "WRONGTYPE":
        return WrongTypeError(key, rest[len("type="):] if rest.startswith("type=") else rest, caller, op)
    if kind == "RESERVED":
        return ReservedFieldError()
    return KeyguardError(f"keyguard: {op} {key!r}: {m.group(0)}")


def is_noscript(exc: BaseException) -> bool:
    # redis-py turns the NOSCRIPT reply into NoScriptError, dropping the code.
    return type(exc).__name__ == "NoScriptError" or str(exc).startswith("NOSCRIPT")


def is_wrongtype(exc: BaseException) -> bool:
    return "WRONGTYPE" in str(exc)
