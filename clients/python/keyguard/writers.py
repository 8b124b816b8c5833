"""Writer records and metrics: the same records the Go hook writes, so that
`keyguard writers`, `keyguard serve` and the second-writer alert see Python
services too.

    keyguard:{writers}:index      hash  template id -> template text (persistent)
    keyguard:{writers}:t:<id>     zset  service -> last write, unix ms; trimmed to the window, TTL = window

<id> is template_id(template): 16 hex digits of the SHA-256 of the template
text. Marking a write is an in-memory set insertion; all Redis I/O happens in
flush(), from the background thread start() runs or from the caller.
"""
from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from datetime import timedelta
from typing import Any, Optional, Set, Tuple

RECORD_PREFIX = "keyguard:{writers}:"
RECORD_INDEX_KEY = RECORD_PREFIX + "index"
DEFAULT_FLUSH_EVERY = 10.0  # seconds
DEFAULT_WINDOW = timedelta(hours=24)

# Metric names: those of the Go hook, so the same alert rules apply.
METRIC_COMMANDS = "keyguard_commands_total"
METRIC_UNREGISTERED = "keyguard_unregistered_total"
METRIC_GUARD_CONFLICTS = "keyguard_guard_conflicts_total"
TEMPLATE_UNREGISTERED = "unregistered"


def template_id(template: str) -> str:
    """The id of a template in the writer records."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:16]


def record_key(template: str) -> str:
    """The sorted set holding the writers of template."""
    return RECORD_PREFIX + "t:" + template_id(template)


class _Marks:
    def __init__(self, window: timedelta) -> None:
        self.window_ms = window // timedelta(milliseconds=1)
        if self.window_ms <= 0:
            raise ValueError("keyguard: writer-record window must be positive")
        self._lock = threading.Lock()
        self._dirty: Set[Tuple[str, str]] = set()

    def mark(self, template: str, service: str) -> None:
        """Notes that service wrote a key of template (no I/O)."""
        if not template or not service:
            return
        with self._lock:
            self._dirty.add((template, service))

    def _take(self) -> Set[Tuple[str, str]]:
        with self._lock:
            todo, self._dirty = self._dirty, set()
        return todo

    def _restore(self, todo: Set[Tuple[str, str]]) -> None:
        with self._lock:
            self._dirty |= todo

    def _queue(self, pipe: Any, todo: Set[Tuple[str, str]]) -> None:
        now = int(time.time() * 1000)
        oldest = "(" + str(now - self.window_ms)
        for template, service in sorted(todo):
            tid = template_id(template)
            key = RECORD_PREFIX + "t:" + tid
            pipe.hset(RECORD_INDEX_KEY, tid, template)
            pipe.execute_command("ZADD", key, "GT", now, service)  # a lagging clock never moves it back
            pipe.zremrangebyscore(key, "-inf", oldest)
            pipe.pexpire(key, self.window_ms)


class Recorder(_Marks):
    """Writer records through a redis.Redis or RedisCluster (give it a
    client of its own). Call start() for a flush every `every` seconds, and
    close() at exit."""

    def __init__(self, client: Any, every: float = DEFAULT_FLUSH_EVERY, window: timedelta = DEFAULT_WINDOW) -> None:
        super().__init__(window)
        self._client = client
        self.every = every
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.last_error: Optional[BaseException] = None

    def flush(self) -> int:
        """Writes the templates written since the last flush; returns how many
        records it wrote. On error the marks are kept for the next flush."""
        todo = self._take()
        if not todo:
            return 0
        pipe = self._client.pipeline(transaction=False)
        self._queue(pipe, todo)
        try:
            pipe.execute()
        except Exception as e:
            self._restore(todo)
            self.last_error = e
            raise
        return len(todo)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="keyguard-writers", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.flush()
            except Exception:
                pass  # kept in last_error and retried at the next tick

    def close(self) -> None:
        """Stops the background flush and flushes what is left."""
        t, self._thread = self._thread, None
        if t is not None:
            self._stop.set()
            t.join(timeout=5)
        self.flush()


class AsyncRecorder(_Marks):
    """Recorder over redis.asyncio: start() runs the flush as a task."""

    def __init__(self, client: Any, every: float = DEFAULT_FLUSH_EVERY, window: timedelta = DEFAULT_WINDOW) -> None:
        super().__init__(window)
        self._client = client
        self.every = every
        self._task: Optional["asyncio.Task[None]"] = None
        self.last_error: Optional[BaseException] = None

    async def flush(self) -> int:
        todo = self._take()
        if not todo:
            return 0
        pipe = self._client.pipeline(transaction=False)
        self._queue(pipe, todo)
        try:
            await pipe.execute()
        except Exception as e:
            self._restore(todo)
            self.last_error = e
            raise
        return len(todo)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            try:
                await self.flush()
            except Exception:
                pass

    async def close(self) -> None:
        t, self._task = self._task, None
        if t is not None:
            t.cancel()
            try:
                await t
            except asyncio.CancelledError:
                pass
        await self.flush()


class Metrics:
    """prometheus_client counters with the Go hook's names and labels:
    keyguard_commands_total{template,owner,service,access},
    keyguard_unregistered_total{service,access},
    keyguard_guard_conflicts_total{template,owner}. registry defaults to
    prometheus_client's default registry; counters already registered there
    (by another Metrics) are reused."""

    def __init__(self, registry: Any = None) -> None:
        import prometheus_client as pc

        reg = pc.REGISTRY if registry is None else registry

        def counter(name: str, doc: str, labels: Tuple[str, ...]) -> Any:
            try:
                return pc.Counter(name, doc, labels, registry=reg)
            except ValueError:  # already registered: share the series
                existing = getattr(reg, "_names_to_collectors", {}).get(name)
                if existing is None:
                    raise
                return existing

        self.commands = counter(METRIC_COMMANDS, "Redis commands per key template, template owner, calling service and access (read|write).",
                                ("template", "owner", "service", "access"))
        self.unregistered = counter(METRIC_UNREGISTERED, "Redis commands touching keys that match no registered template.",
                                    ("service", "access"))
        self.guard_conflicts = counter(METRIC_GUARD_CONFLICTS, "Namespace guard conflicts: writes refused because another namespace owns the key.",
                                       ("template", "owner"))

    def command(self, template: Any, service: str, write: bool) -> None:
        access = "write" if write else "read"
        if template is None:
            self.unregistered.labels(service, access).inc()
        else:
            self.commands.labels(template.template, template.owner, service, access).inc()

    def guard_conflict(self, template: Any, owner: str) -> None:
        self.guard_conflicts.labels(TEMPLATE_UNREGISTERED if template is None else template.template, owner).inc()
