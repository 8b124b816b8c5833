"""The namespace guard: a hash records its owner namespace in the reserved
field __ns__, and every write checks and claims it atomically with the
guard's Lua script (the one the Go guard runs, embedded from one source), so
a second service writing the same key fails loudly with ForeignOwnerError
instead of silently overwriting.

    g = Guard(redis.Redis(), owner="order-service:order", ttl=timedelta(hours=1))
    g.hset("order:order:1001:base", {"amount": "99"})  # claims the key, sets the TTL once

The TTL is given only to a key that has none (normally by the write that
creates it): a write never renews it. A key holding another type is a
conflict (WrongTypeError), never retried. A key built by the generated
builders of a template that declares its fields is written with them alone
(PolicyError, reason "schema", before anything is sent; see keyguard.fields).
"""
from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ._generated import SCRIPT
from .errors import (RESERVED_FIELD, ForeignOwnerError, KeyguardError, ReservedFieldError,
                     WrongTypeError, is_noscript, is_wrongtype, script_error)
from .fields import check_hash

SCRIPT_SHA = hashlib.sha1(SCRIPT.encode("utf-8")).hexdigest()
"""The SHA-1 digest EVALSHA uses for SCRIPT; the same in every language."""

TTL = Union[None, int, float, timedelta]
"""A TTL: a timedelta, or seconds as an int or float."""


@dataclass(frozen=True)
class Result:
    """What one guarded write did."""

    added: int  # fields that did not exist before
    updated: int  # existing fields that were overwritten
    claimed: bool  # the key had no owner and is now ours
    adopted: bool  # claimed, and the hash existed without an owner
    ttl_set: bool  # this write set the key's TTL (it had none)


@dataclass
class SetOp:
    """One write of Guard.hset_many: mapping on key, with an optional TTL."""

    key: str
    mapping: Mapping[Any, Any]
    ttl: TTL = None


def ttl_ms(ttl: TTL) -> int:
    """A TTL in whole milliseconds."""
    if isinstance(ttl, timedelta):
        return ttl // timedelta(milliseconds=1)
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
        raise TypeError(f"keyguard: TTL {ttl!r}: give a timedelta or seconds")
    return int(ttl * 1000)


def _text(v: Any) -> str:
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    return str(v)


def valid_namespace(ns: str) -> None:
    """Raises ValueError for a namespace the guard refuses (as the Go guard)."""
    if not isinstance(ns, str) or ns == "":
        raise ValueError('keyguard: empty namespace; name the owner such as "order-service:order"')
    if ns == RESERVED_FIELD:
        raise ValueError("keyguard: the namespace cannot be the reserved field name " + RESERVED_FIELD)
    if len(ns.encode("utf-8")) > 200:
        raise ValueError(f"keyguard: namespace of {len(ns)} characters; keep it under 200 bytes")
    for i, c in enumerate(ns):
        if c <= " " or c > "~":
            raise ValueError(f"keyguard: namespace character {c!r} at {i}; use printable ASCII without spaces")


def is_cluster(client: Any) -> bool:
    """Whether client is a redis-py cluster client (sync or asyncio)."""
    return hasattr(client, "get_node_from_key")


def is_redirect(exc: BaseException) -> bool:
    msg = str(exc)
    return "MOVED " in msg or "ASK " in msg or type(exc).__name__ in ("MovedError", "AskError")


def template_of(key: Any) -> Optional[Any]:
    """The registry template a key built by the generated builders carries
    (its .template), or None for a plain string."""
    t = getattr(key, "template", None)
    return t if t is not None and hasattr(t, "template") else None


class _Core:
    """What Guard and AsyncGuard share: configuration, arguments, replies."""

    def __init__(self, client: Any, owner: str, *, ttl: TTL = None, jitter: TTL = None, persistent: bool = False,
                 service: Optional[str] = None, recorder: Any = None, metrics: Any = None) -> None:
        if client is None:
            raise ValueError("keyguard: no Redis client; pass a redis.Redis, RedisCluster or redis.asyncio.Redis")
        valid_namespace(owner)
        self._client = client
        self.owner = owner
        self.persistent = persistent
        self._ttl_ms = 0 if ttl is None else ttl_ms(ttl)
        self._jitter_ms = 0 if jitter is None else ttl_ms(jitter)
        if persistent and (self._ttl_ms or self._jitter_ms):
            raise ValueError("keyguard: persistent with a TTL or jitter; a persistent key gets no TTL, drop ttl and jitter")
        if ttl is not None and self._ttl_ms < 1:
            raise ValueError(f"keyguard: TTL {ttl!r}; give at least 1 ms, or persistent=True for a key that must never expire")
        if self._jitter_ms < 0:
            raise ValueError(f"keyguard: negative jitter {jitter!r}")
        self.service = service or owner
        self._recorder = recorder
        self._metrics = metrics
        self._rnd = random.Random()

    @property
    def client(self) -> Any:
        return self._client

    def _ttl_arg(self, key: Any, ttl: TTL) -> int:
        """The TTL in ms the script gets for a write of key; 0 = none."""
        if ttl is not None:
            if self.persistent:
                raise ValueError(f"keyguard: set {str(key)!r}: a TTL on a persistent guard; drop ttl")
            ms = ttl_ms(ttl)
            if ms < 1:
                raise ValueError(f"keyguard: set {str(key)!r}: TTL {ttl!r}; give at least 1 ms")
            return ms
        if self.persistent:
            return 0
        if self._ttl_ms:
            if self._jitter_ms:
                return self._ttl_ms + self._rnd.randint(0, self._jitter_ms)
            return self._ttl_ms
        t = template_of(key)
        if t is not None:
            if t.persistent:
                return 0
            base = ttl_ms(t.ttl)
            if base > 0:
                j = ttl_ms(t.ttl_jitter)
                return base + (self._rnd.randint(0, j) if j > 0 else 0)
        raise ValueError(f"keyguard: set {str(key)!r}: no TTL: give the Guard a ttl (or persistent=True), "
                         "pass ttl=..., or build the key with the generated builders of a template that has one")

    def _set_args(self, key: Any, mapping: Mapping[Any, Any], ttl: TTL) -> List[Any]:
        if not mapping:
            raise ValueError(f"keyguard: set {str(key)!r}: no fields given; pass at least one field")
        args: List[Any] = ["set", self.owner, self._ttl_arg(key, ttl)]
        for f, v in mapping.items():
            if _text(f) == RESERVED_FIELD:
                raise ReservedFieldError()
            args.append(f)
            args.append(v)
        check_hash("set", key, template_of(key), mapping.keys())
        return args

    def _parse_set(self, key: Any, reply: Any) -> Result:
        if not isinstance(reply, (list, tuple)) or len(reply) != 4:
            raise KeyguardError(f"keyguard: set {str(key)!r}: unexpected script reply {reply!r}; "
                                f"is the server running the guard script {SCRIPT_SHA}?")
        n = [int(x) for x in reply]
        r = Result(added=n[0], updated=n[1], claimed=n[2] != 0, adopted=n[2] == 2, ttl_set=n[3] == 1)
        self._observe(key, None)
        return r

    def _fail(self, op: str, key: Any, exc: BaseException) -> BaseException:
        err = script_error(exc, op, str(key), self.owner)
        if err is None:
            return exc
        self._observe(key, err)
        return err

    def _observe(self, key: Any, err: Optional[BaseException]) -> None:
        """Writer records and metrics of one guarded write of key."""
        t = template_of(key)
        if err is None:
            if t is not None and self._recorder is not None:
                self._recorder.mark(t.template, self.service)
            if self._metrics is not None:
                self._metrics.command(t, self.service, write=True)
        elif isinstance(err, ForeignOwnerError) and self._metrics is not None:
            self._metrics.guard_conflict(t, err.owner)  # as the Go hook: owner conflicts, by the owner found

    def _owner_conflict(self, op: str, key: Any, owner: Any) -> Optional[ForeignOwnerError]:
        if owner is None:
            return None
        o = _text(owner)
        if o == self.owner:
            return None
        err = ForeignOwnerError(str(key), o, self.owner, op)
        self._observe(key, err)
        return err


class Guard(_Core):
    """Writes and reads hashes owned by one namespace through a redis.Redis
    (or redis.cluster.RedisCluster). Thread-safe as the client is.

    ttl: given to a key without TTL (jitter: a random extra of up to it);
    persistent: never give a TTL. Without either, each write takes ttl=...
    or the TTL of the key's template (keys built by the generated builders).
    service, recorder, metrics: writer records and counters of guarded
    writes (see keyguard.writers)."""

    def _evalsha(self, key: Any, args: Sequence[Any]) -> Any:
        try:
            return self._client.evalsha(SCRIPT_SHA, 1, key, *args)
        except Exception as e:  # NOSCRIPT: flushed, restarted, failed over
            if not is_noscript(e):
                raise
        return self._client.eval(SCRIPT, 1, key, *args)

    def set(self, key: Any, field: Any, value: Any, ttl: TTL = None) -> Result:
        """Writes one field; see hset."""
        return self.hset(key, {field: value}, ttl=ttl)

    def hset(self, key: Any, mapping: Mapping[Any, Any], ttl: TTL = None) -> Result:
        """Writes the fields of mapping to the hash at key in one atomic step:
        claims the key when it has no owner, raises ForeignOwnerError when
        another namespace owns it (WrongTypeError when it is not a hash), and
        sets the TTL only when the key has none."""
        args = self._set_args(key, mapping, ttl)
        try:
            return self._parse_set(key, self._evalsha(key, args))
        except KeyguardError:
            raise
        except Exception as e:
            raise self._fail("set", key, e) from None

    def hset_many(self, ops: Iterable[Union[SetOp, Tuple[Any, Mapping[Any, Any]]]]) -> List[Union[Result, Exception]]:
        """Runs the writes in one pipeline, each atomic on its own (the batch
        is not). Returns one Result or exception per op, in order: inspect
        each. Ops answered NOSCRIPT did not run: the script is loaded and only
        they are sent again."""
        ops = [o if isinstance(o, SetOp) else SetOp(o[0], o[1]) for o in ops]
        out: List[Union[Result, Exception]] = [None] * len(ops)  # type: ignore[list-item]
        args: List[Optional[List[Any]]] = []
        for i, op in enumerate(ops):
            try:
                args.append(self._set_args(op.key, op.mapping, op.ttl))
            except Exception as e:
                args.append(None)
                out[i] = e
        todo = [i for i, a in enumerate(args) if a is not None]
        replies = self._pipe(ops, args, todo, sha=True)
        retry = [i for i in todo if isinstance(replies[i], Exception) and is_noscript(replies[i])]
        if retry:
            try:
                self._client.script_load(SCRIPT)
            except Exception:
                pass
            replies.update(self._pipe(ops, args, retry, sha=False))
        for i in todo:
            r = replies[i]
            if isinstance(r, Exception):
                out[i] = self._fail("set", ops[i].key, r)  # type: ignore[assignment]
            else:
                try:
                    out[i] = self._parse_set(ops[i].key, r)
                except Exception as e:
                    out[i] = e
        return out

    def _pipe(self, ops: Sequence[SetOp], args: Sequence[Optional[List[Any]]], idx: List[int], sha: bool) -> Dict[int, Any]:
        if not idx:
            return {}
        if not is_cluster(self._client):
            return self._pipe_on(self._client, ops, args, idx, sha)
        # redis-py refuses scripts in cluster pipelines: one pipeline per
        # node, each op sent again alone through the cluster client when
        # its slot moved meanwhile.
        by_node: Dict[str, List[int]] = {}
        nodes: Dict[str, Any] = {}
        for i in idx:
            node = self._client.get_node_from_key(ops[i].key)
            by_node.setdefault(node.name, []).append(i)
            nodes[node.name] = node
        out: Dict[int, Any] = {}
        for name, group in by_node.items():
            out.update(self._pipe_on(self._client.get_redis_connection(nodes[name]), ops, args, group, sha))
        for i in idx:
            r = out[i]
            if isinstance(r, Exception) and is_redirect(r):
                try:
                    out[i] = self._evalsha(ops[i].key, args[i] or [])
                except Exception as e:
                    out[i] = e
        return out

    @staticmethod
    def _pipe_on(client: Any, ops: Sequence[SetOp], args: Sequence[Optional[List[Any]]], idx: List[int], sha: bool) -> Dict[int, Any]:
        pipe = client.pipeline(transaction=False)
        for i in idx:
            a = args[i] or []
            if sha:
                pipe.evalsha(SCRIPT_SHA, 1, ops[i].key, *a)
            else:
                pipe.eval(SCRIPT, 1, ops[i].key, *a)
        return dict(zip(idx, pipe.execute(raise_on_error=False)))

    def _read_err(self, op: str, key: Any, e: Exception) -> Exception:
        if not is_wrongtype(e):
            return e
        typ = _text(self._client.type(key))
        err = WrongTypeError(str(key), typ, self.owner, op)
        self._observe(key, err)
        return err

    def get(self, key: Any, field: Any) -> Any:
        """One field (HMGET of the owner field and the field), or None. A key
        of another namespace or type raises a ConflictError."""
        if _text(field) == RESERVED_FIELD:
            raise ReservedFieldError()
        try:
            owner, value = self._client.hmget(key, [RESERVED_FIELD, field])
        except Exception as e:
            raise self._read_err("get", key, e) from None
        err = self._owner_conflict("get", key, owner)
        if err:
            raise err
        return value

    def getall(self, key: Any) -> Dict[Any, Any]:
        """The business fields (HGETALL, owner field checked and removed)."""
        try:
            m = self._client.hgetall(key)
        except Exception as e:
            raise self._read_err("getall", key, e) from None
        for k in list(m):
            if _text(k) == RESERVED_FIELD:
                err = self._owner_conflict("getall", key, m.pop(k))
                if err:
                    raise err
        return m

    def owner_of(self, key: Any) -> Optional[str]:
        """The namespace owning key, or None when it does not exist or has none."""
        try:
            v = self._client.hget(key, RESERVED_FIELD)
        except Exception as e:
            raise self._read_err("owner", key, e) from None
        return None if v is None else _text(v)

    def delete(self, key: Any) -> bool:
        """Deletes key when it is ours or has no owner (one atomic step)."""
        try:
            return int(self._evalsha(key, ["del", self.owner])) == 1
        except Exception as e:
            raise self._fail("delete", key, e) from None

    def force_delete(self, key: Any) -> bool:
        """DEL whoever owns the key: for an operator who confirmed the ownership."""
        return int(self._client.delete(key)) == 1

    def expire_nx(self, key: Any, ttl: TTL) -> bool:
        """EXPIRE key seconds NX: a TTL only when the key has none, so a writer
        that does not own the key can never change the owner's lifecycle.
        False when the key has a TTL or does not exist. Whole seconds, at least 1."""
        secs = max(1, ttl_ms(ttl) // 1000)
        return int(self._client.execute_command("EXPIRE", key, secs, "NX")) == 1


class AsyncGuard(_Core):
    """Guard over redis.asyncio.Redis (or redis.asyncio.RedisCluster): the
    same methods, as coroutines."""

    async def _evalsha(self, key: Any, args: Sequence[Any]) -> Any:
        try:
            return await self._client.evalsha(SCRIPT_SHA, 1, key, *args)
        except Exception as e:
            if not is_noscript(e):
                raise
        return await self._client.eval(SCRIPT, 1, key, *args)

    async def set(self, key: Any, field: Any, value: Any, ttl: TTL = None) -> Result:
        return await self.hset(key, {field: value}, ttl=ttl)

    async def hset(self, key: Any, mapping: Mapping[Any, Any], ttl: TTL = None) -> Result:
        args = self._set_args(key, mapping, ttl)
        try:
            return self._parse_set(key, await self._evalsha(key, args))
        except KeyguardError:
            raise
        except Exception as e:
            raise self._fail("set", key, e) from None

    async def hset_many(self, ops: Iterable[Union[SetOp, Tuple[Any, Mapping[Any, Any]]]]) -> List[Union[Result, Exception]]:
        ops = [o if isinstance(o, SetOp) else SetOp(o[0], o[1]) for o in ops]
        out: List[Union[Result, Exception]] = [None] * len(ops)  # type: ignore[list-item]
        args: List[Optional[List[Any]]] = []
        for i, op in enumerate(ops):
            try:
                args.append(self._set_args(op.key, op.mapping, op.ttl))
            except Exception as e:
                args.append(None)
                out[i] = e
        todo = [i for i, a in enumerate(args) if a is not None]
        replies = await self._pipe(ops, args, todo, sha=True)
        retry = [i for i in todo if isinstance(replies[i], Exception) and is_noscript(replies[i])]
        if retry:
            try:
                await self._client.script_load(SCRIPT)
            except Exception:
                pass
            replies.update(await self._pipe(ops, args, retry, sha=False))
        for i in todo:
            r = replies[i]
            if isinstance(r, Exception):
                out[i] = self._fail("set", ops[i].key, r)  # type: ignore[assignment]
            else:
                try:
                    out[i] = self._parse_set(ops[i].key, r)
                except Exception as e:
                    out[i] = e
        return out

    async def _pipe(self, ops: Sequence[SetOp], args: Sequence[Optional[List[Any]]], idx: List[int], sha: bool) -> Dict[int, Any]:
        if not idx:
            return {}
        if is_cluster(self._client):
            # No script pipelines on redis-py's cluster: the calls run
            # concurrently, each routed by its key.
            async def one(i: int) -> Any:
                a = args[i] or []
                try:
                    if sha:
                        return await self._client.evalsha(SCRIPT_SHA, 1, ops[i].key, *a)
                    return await self._client.eval(SCRIPT, 1, ops[i].key, *a)
                except Exception as e:
                    return e
            return dict(zip(idx, await asyncio.gather(*(one(i) for i in idx))))
        pipe = self._client.pipeline(transaction=False)
        for i in idx:
            a = args[i] or []
            if sha:
                pipe.evalsha(SCRIPT_SHA, 1, ops[i].key, *a)
            else:
                pipe.eval(SCRIPT, 1, ops[i].key, *a)
        return dict(zip(idx, await pipe.execute(raise_on_error=False)))

    async def _read_err(self, op: str, key: Any, e: Exception) -> Exception:
        if not is_wrongtype(e):
            return e
        typ = _text(await self._client.type(key))
        err = WrongTypeError(str(key), typ, self.owner, op)
        self._observe(key, err)
        return err

    async def get(self, key: Any, field: Any) -> Any:
        if _text(field) == RESERVED_FIELD:
            raise ReservedFieldError()
        try:
            owner, value = await self._client.hmget(key, [RESERVED_FIELD, field])
        except Exception as e:
            raise (await self._read_err("get", key, e)) from None
        err = self._owner_conflict("get", key, owner)
        if err:
            raise err
        return value

    async def getall(self, key: Any) -> Dict[Any, Any]:
        try:
            m = await self._client.hgetall(key)
        except Exception as e:
            raise (await self._read_err("getall", key, e)) from None
        for k in list(m):
            if _text(k) == RESERVED_FIELD:
                err = self._owner_conflict("getall", key, m.pop(k))
                if err:
                    raise err
        return m

    async def owner_of(self, key: Any) -> Optional[str]:
        try:
            v = await self._client.hget(key, RESERVED_FIELD)
        except Exception as e:
            raise (await self._read_err("owner", key, e)) from None
        return None if v is None else _text(v)

    async def delete(self, key: Any) -> bool:
        try:
            return int(await self._evalsha(key, ["del", self.owner])) == 1
        except Exception as e:
            raise self._fail("delete", key, e) from None

    async def force_delete(self, key: Any) -> bool:
        return int(await self._client.delete(key)) == 1

    async def expire_nx(self, key: Any, ttl: TTL) -> bool:
        secs = max(1, ttl_ms(ttl) // 1000)
        return int(await self._client.execute_command("EXPIRE", key, secs, "NX")) == 1
