#!/usr/bin/env python3
"""fields-check.py — what the Python runtime's check of a template's declared
fields costs beside the write it guards: keyguard.fields.check_json on a
595-byte JSON object of five declared keys, against redis-py's SET ... PX of
the same value on a running server. Best of three rounds.

    /usr/bin/python3 bench/fields-check.py PORT      # a redis-server on 127.0.0.1:PORT

Run from the repository's root (it imports clients/python/keyguard)."""
import json
import os
import sys
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

import redis  # noqa: E402

from keyguard.fields import check_json  # noqa: E402


def best_us(fn, n):
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def main():
    port = int(sys.argv[1])
    t = types.SimpleNamespace(template="order:view:{id}", type="string",
                              fields=("id", "name", "price", "tags", "desc"), fields_extra=False)
    value = json.dumps({"id": 1001, "name": "stainless steel water bottle 750ml", "price": 2590,
                        "tags": ["kitchen", "outdoor", "gift"],
                        "desc": "double-walled, keeps drinks cold for 24 hours. " * 10})
    r = redis.Redis(port=port)
    check = best_us(lambda: check_json("set", "order:view:1", t, value), 20000)
    write = best_us(lambda: r.set("order:view:1", value, px=600000), 5000)
    print(f"{len(value)}-byte value: check_json {check:.1f} us, redis-py SET {write:.1f} us ({check / write:.0%})")


if __name__ == "__main__":
    main()
