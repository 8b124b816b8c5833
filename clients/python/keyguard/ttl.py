"""The registry's TTL policy for writes of keys built by the generated
builders (keyguard gen --lang python): a key of a TTL template is always
written with the template's TTL (plus a random jitter when the template has
ttl_jitter), a key of a persistent template never gets one, and there is no
way through this module to write a TTL template's key without a TTL.

    p = TTLPolicy(r)
    p.set(keys.lock_order_pay("A1"), token)            # SET ... PX ttl
    p.hset(keys.order_base(1001), {"amount": 99})      # MULTI HSET PEXPIRE EXEC

Every write (re)sets the TTL, as SET ... EX does; the namespace guard has the
other semantics (the TTL set once, by the write that creates the key).

A template that declares its fields (registry fields, without fields_extra:
allow) is written with them alone: set, set_nx and hset refuse a value that
is not a JSON object of the declared fields, or a hash field not declared
(PolicyError, reason "schema"), before sending anything. do()'s commands are
not checked.
"""
from __future__ import annotations

import random
from datetime import timedelta
from typing import Any, Callable, List, Mapping, Optional

from .errors import PolicyError
from .fields import check_hash, check_json
from .guard import is_cluster, template_of, ttl_ms


class TTLPolicy:
    """Writes through a redis.Redis or RedisCluster client (synchronous only;
    on redis.asyncio, run a TTL template's write and its PEXPIRE in one
    transaction the same way)."""

    def __init__(self, client: Any, seed: Optional[int] = None, recorder: Any = None, service: Optional[str] = None,
                 metrics: Any = None) -> None:
        self._client = client
        self._rnd = random.Random(seed)
        self._recorder = recorder
        self._service = service
        self._metrics = metrics

    def ttl_ms(self, key: Any) -> int:
        """The TTL in ms a write gives key (jitter drawn); 0 for a persistent template."""
        return self._ttl(self._entry("ttl", key, ""))

    def _entry(self, op: str, key: Any, typ: str) -> Any:
        t = template_of(key)
        if t is None:
            raise PolicyError(op, str(key), "", "unregistered",
                              "the key carries no template; build it with the generated builders (keyguard gen --lang python)")
        if not t.persistent and ttl_ms(t.ttl) <= 0:
            raise PolicyError(op, str(key), t.template, "no-policy",
                              "the template has no TTL policy; give it a ttl, or persistent: true if the key must never expire")
        if typ and t.type and t.type != typ:
            raise PolicyError(op, str(key), t.template, "type",
                              f"the template declares type {t.type}; use the helper for that type (do() works for any command)")
        return t

    def _ttl(self, t: Any) -> int:
        if t.persistent:
            return 0
        j = ttl_ms(t.ttl_jitter)
        return ttl_ms(t.ttl) + (self._rnd.randint(0, j) if j > 0 else 0)

    def _observe(self, key: Any) -> None:
        t = template_of(key)
        if self._recorder is not None and self._service:
            self._recorder.mark(t.template, self._service)
        if self._metrics is not None and self._service:
            self._metrics.command(t, self._service, write=True)

    def set(self, key: Any, value: Any) -> Any:
        """SET key value PX ttl (SET key value for a persistent template)."""
        t = self._entry("set", key, "string")
        check_json("set", key, t, value)
        ttl = self._ttl(t)
        r = self._client.set(key, value, px=ttl or None)
        self._observe(key)
        return r

    def set_nx(self, key: Any, value: Any) -> bool:
        """SET key value NX PX ttl; whether it was written."""
        t = self._entry("set", key, "string")
        check_json("set", key, t, value)
        ttl = self._ttl(t)
        r = bool(self._client.set(key, value, px=ttl or None, nx=True))
        self._observe(key)
        return r

    def hset(self, key: Any, mapping: Mapping[Any, Any]) -> int:
        """HSET and the template's PEXPIRE in one MULTI/EXEC; the fields added."""
        check_hash("hset", key, self._entry("hset", key, "hash"), mapping.keys())
        return self.do(key, lambda pipe: pipe.hset(key, mapping=mapping), typ="hash")[0]

    def expire(self, key: Any) -> bool:
        """PEXPIRE key ttl; refused (PolicyError "persistent") on a persistent template."""
        t = self._entry("expire", key, "")
        if t.persistent:
            raise PolicyError("expire", str(key), t.template, "persistent",
                              "the template is persistent: its keys never get a TTL")
        return bool(self._client.pexpire(key, self._ttl(t)))

    def persist(self, key: Any) -> None:
        """Always refused on a TTL template: its keys must not lose their TTL."""
        t = self._entry("persist", key, "")
        if not t.persistent:
            raise PolicyError("persist", str(key), t.template, "persistent",
                              "the template has a TTL; a persistent write would keep the key forever")

    def do(self, key: Any, fn: Callable[[Any], Any], typ: str = "") -> List[Any]:
        """Runs the commands fn queues on a MULTI/EXEC pipeline, then PEXPIRE
        key ttl (nothing for a persistent template). Returns the replies of the
        queued commands. fn should touch key only (one Cluster slot)."""
        t = self._entry("do", key, typ)
        ttl = self._ttl(t)
        client = self._client
        if is_cluster(client):  # one key, one slot: the transaction runs on its node
            client = client.get_redis_connection(client.get_node_from_key(key))
        pipe = client.pipeline(transaction=True)
        fn(pipe)
        n = len(pipe)
        if ttl > 0:
            pipe.pexpire(key, ttl)
        replies = pipe.execute()
        self._observe(key)
        return list(replies[:n])
