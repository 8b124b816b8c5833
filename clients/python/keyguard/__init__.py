"""keyguard's runtime for Python services: the namespace guard, the
registry's TTL policy and the writer records behind `keyguard writers`, with
the same protocol and records as the Go SDK. See README.md."""
from ._generated import SCRIPT, VERSION
from .client import instrument
from .errors import (RESERVED_FIELD, ConflictError, ForeignOwnerError, KeyguardError, PolicyError,
                     ReservedFieldError, WrongTypeError)
from .guard import SCRIPT_SHA, AsyncGuard, Guard, Result, SetOp
from .ttl import TTLPolicy
from .writers import RECORD_INDEX_KEY, RECORD_PREFIX, AsyncRecorder, Metrics, Recorder, record_key, template_id

__version__ = VERSION

__all__ = [
    "SCRIPT", "SCRIPT_SHA", "VERSION", "RESERVED_FIELD",
    "Guard", "AsyncGuard", "Result", "SetOp",
    "KeyguardError", "ConflictError", "ForeignOwnerError", "WrongTypeError", "ReservedFieldError", "PolicyError",
    "TTLPolicy", "Recorder", "AsyncRecorder", "Metrics", "instrument",
    "RECORD_PREFIX", "RECORD_INDEX_KEY", "template_id", "record_key",
]
