"""LogFlushStats: how often and how long logs fsync (Kafka's LogFlushStats.logFlushTimer).

Process-wide, as Kafka's static timer is: every UnifiedLog.flush that writes
anything to disk records its duration here; the broker's metrics endpoint
publishes it as LogFlushRateAndTimeMs.
"""

from __future__ import annotations

import threading
from typing import Final

# Upper bounds (ms) of the duration buckets published with the timer.
BUCKETS_MS: Final = (0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0)

_lock = threading.Lock()
_count = 0
_total_ms = 0.0
_buckets = [0] * (len(BUCKETS_MS) + 1)


def record(duration_ms: float) -> None:
    global _count, _total_ms
    index = next((i for i, bound in enumerate(BUCKETS_MS) if duration_ms <= bound), len(BUCKETS_MS))
    with _lock:
        _count += 1
        _total_ms += duration_ms
        _buckets[index] += 1


def snapshot() -> tuple[int, float, list[int]]:
    """(flush count, total ms, per-bucket counts, the last bucket unbounded)."""
    with _lock:
        return _count, _total_ms, list(_buckets)
