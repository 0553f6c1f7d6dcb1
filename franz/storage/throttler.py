"""Throttler: hold a producer of bytes to a rate (Kafka's storage Throttler).

Callers report what they did with maybe_throttle(observed); once a check
interval has passed, a caller above the desired rate sleeps for as long as
brings the interval's average down to it. One throttler may be shared by
several threads (the log cleaner's threads share one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Throttler:
    def __init__(self, desired_rate_per_sec: float, check_interval_ms: int = 300,
                 sleep: Callable[[float], None] = time.sleep, nanoseconds: Callable[[], int] = time.monotonic_ns) -> None:
        self.desired_rate_per_sec = desired_rate_per_sec
        self._check_interval_ns = check_interval_ms * 1_000_000
        self._sleep = sleep
        self._nanoseconds = nanoseconds
        self._lock = threading.Lock()
        self._period_start_ns = nanoseconds()
        self._observed_so_far = 0.0

    def maybe_throttle(self, observed: float) -> None:
        with self._lock:
            self._observed_so_far += observed
            now = self._nanoseconds()
            elapsed_ns = now - self._period_start_ns
            if elapsed_ns <= self._check_interval_ns or self._observed_so_far <= 0:
                return
            rate = self._observed_so_far * 1e9 / elapsed_ns
            if rate > self.desired_rate_per_sec:
                desired_per_ms = self.desired_rate_per_sec / 1000
                sleep_ms = round(self._observed_so_far / desired_per_ms - elapsed_ns // 1_000_000)
                if sleep_ms > 0:
                    self._sleep(sleep_ms / 1000)
            self._period_start_ns = self._nanoseconds()
            self._observed_so_far = 0.0
