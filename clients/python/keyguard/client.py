"""instrument(): a wrapper over redis.Redis, redis.asyncio.Redis, the
cluster clients and their pipelines that records, for every command given a
key built by the generated builders, the template and the calling service:
writer records (Recorder) and counters (Metrics). Commands pass through
unchanged; nothing is refused here (the namespace guard and the TTL policy
refuse).

    r = keyguard.instrument(redis.Redis(), service="order-team",
                            recorder=keyguard.Recorder(redis.Redis()), metrics=keyguard.Metrics())
    r.hset(keys.order_base(1001), mapping={"amount": 99})   # order:order:{orderId:int}:base x order-team

Keys given as plain strings carry no template: they are counted in
keyguard_unregistered_total and are not in the writer records.
"""
from __future__ import annotations

import inspect
import types
from typing import Any, List, Optional, Tuple

from .guard import template_of

# Commands that write their keys (Redis 7.0). Others are counted as reads
# when they carry a key built by the generated builders.
WRITE_COMMANDS = frozenset("""
APPEND BITFIELD BITOP BLMOVE BLMPOP BLPOP BRPOP BRPOPLPUSH BZMPOP BZPOPMAX BZPOPMIN COPY DECR DECRBY DEL
EXPIRE EXPIREAT GEOADD GEORADIUS GEORADIUSBYMEMBER GEOSEARCHSTORE GETDEL GETEX GETSET HDEL HINCRBY
HINCRBYFLOAT HMSET HSET HSETNX INCR INCRBY INCRBYFLOAT LINSERT LMOVE LMPOP LPOP LPUSH LPUSHX LREM LSET
LTRIM MIGRATE MOVE MSET MSETNX PERSIST PEXPIRE PEXPIREAT PFADD PFMERGE PSETEX RENAME RENAMENX RESTORE
RPOP RPOPLPUSH RPUSH RPUSHX SADD SDIFFSTORE SET SETBIT SETEX SETNX SETRANGE SINTERSTORE SMOVE SORT
SPOP SREM SUNIONSTORE UNLINK XACK XADD XAUTOCLAIM XCLAIM XDEL XGROUP XSETID XTRIM ZADD ZDIFFSTORE
ZINCRBY ZINTERSTORE ZMPOP ZPOPMAX ZPOPMIN ZRANGESTORE ZREM ZREMRANGEBYLEX ZREMRANGEBYRANK
ZREMRANGEBYSCORE ZUNIONSTORE EVAL EVALSHA FCALL
""".split())

_NO_KEYS = frozenset("""
PING ECHO INFO SELECT AUTH HELLO CLIENT CONFIG COMMAND SCRIPT FUNCTION MULTI EXEC DISCARD WATCH UNWATCH
CLUSTER READONLY READWRITE TIME DBSIZE FLUSHALL FLUSHDB SCAN KEYS RANDOMKEY PUBLISH SUBSCRIBE
""".split())


class _Tap:
    def __init__(self, service: str, recorder: Any, metrics: Any) -> None:
        if not service:
            raise ValueError("keyguard: instrument needs the calling service's name, e.g. service=\"order-team\"")
        self.service, self.recorder, self.metrics = service, recorder, metrics

    def seen(self, args: Tuple[Any, ...]) -> None:
        if not args:
            return
        name = args[0]
        name = (name.decode() if isinstance(name, bytes) else str(name)).upper().split(" ")[0]
        if name in _NO_KEYS:
            return
        write = name in WRITE_COMMANDS
        found = False
        done = set()
        for a in args[1:]:
            t = template_of(a)
            if t is None or t.template in done:
                continue
            done.add(t.template)
            found = True
            if write and self.recorder is not None:
                self.recorder.mark(t.template, self.service)
            if self.metrics is not None:
                self.metrics.command(t, self.service, write)
        if not found and self.metrics is not None and len(args) > 1:
            self.metrics.command(None, self.service, write)


def _is_async(client: Any) -> bool:
    return inspect.iscoroutinefunction(getattr(type(client), "execute_command", None))


class _Proxy:
    """Runs the real client's command methods with self as the client, so
    that they call our execute_command."""

    __slots__ = ("_real", "_tap", "_pending")

    def __init__(self, real: Any, tap: _Tap) -> None:
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_tap", tap)
        object.__setattr__(self, "_pending", [])

    def __getattr__(self, name: str) -> Any:
        attr = inspect.getattr_static(type(self._real), name, None)
        if isinstance(attr, types.FunctionType):
            return types.MethodType(attr, self)
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)

    def __repr__(self) -> str:
        return f"keyguard.instrument({self._real!r})"


class InstrumentedClient(_Proxy):
    """A redis.Redis / RedisCluster whose commands feed the writer records."""

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        r = self._real.execute_command(*args, **kwargs)
        self._tap.seen(args)
        return r

    def pipeline(self, *args: Any, **kwargs: Any) -> "InstrumentedPipeline":
        return InstrumentedPipeline(self._real.pipeline(*args, **kwargs), self._tap)


class InstrumentedPipeline(_Proxy):
    """A pipeline whose commands are recorded when it executes."""

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        r = self._real.execute_command(*args, **kwargs)
        if r is self._real:  # queued
            self._pending.append(args)
            return self
        self._tap.seen(args)  # immediate (after WATCH)
        return r

    def execute(self, *args: Any, **kwargs: Any) -> List[Any]:
        pending = self._take()
        r = self._real.execute(*args, **kwargs)
        for a in pending:
            self._tap.seen(a)
        return r

    def _take(self) -> List[Tuple[Any, ...]]:
        pending = list(self._pending)
        self._pending.clear()
        return pending

    def reset(self) -> Any:
        self._pending.clear()
        return self._real.reset()

    def __len__(self) -> int:
        return len(self._real)

    def __enter__(self) -> "InstrumentedPipeline":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.reset()


class AsyncInstrumentedClient(_Proxy):
    """instrument() of a redis.asyncio client."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        r = await self._real.execute_command(*args, **kwargs)
        self._tap.seen(args)
        return r

    def pipeline(self, *args: Any, **kwargs: Any) -> "AsyncInstrumentedPipeline":
        return AsyncInstrumentedPipeline(self._real.pipeline(*args, **kwargs), self._tap)


class AsyncInstrumentedPipeline(InstrumentedPipeline):
    async def execute(self, *args: Any, **kwargs: Any) -> List[Any]:  # type: ignore[override]
        pending = self._take()
        r = await self._real.execute(*args, **kwargs)
        for a in pending:
            self._tap.seen(a)
        return r

    async def __aenter__(self) -> "AsyncInstrumentedPipeline":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        r = self._real.reset()
        if inspect.isawaitable(r):
            await r
        self._pending.clear()


def instrument(client: Any, service: str, recorder: Any = None, metrics: Any = None) -> Any:
    """Wraps client (redis.Redis, redis.cluster.RedisCluster,
    redis.asyncio.Redis, redis.asyncio.RedisCluster) so that its commands and
    pipelines feed recorder (writer records) and metrics."""
    tap = _Tap(service, recorder, metrics)
    if _is_async(client):
        return AsyncInstrumentedClient(client, tap)
    return InstrumentedClient(client, tap)
