"""KafkaScheduler: named periodic and one-shot background tasks on daemon threads.

A task that raises is logged and keeps its schedule (Kafka logs and goes on).
`shutdown()` stops every task and waits for running ones, bounded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class KafkaScheduler:
    def __init__(self, thread_name_prefix: str = "kafka-scheduler-") -> None:
        self.thread_name_prefix = thread_name_prefix
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def _run(self, name: str, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception:  # noqa: BLE001 - a failing task must not kill the scheduler
            log.exception("Uncaught exception in scheduled task '%s'", name)

    def _spawn(self, name: str, body: Callable[[], None]) -> None:
        thread = threading.Thread(target=body, name=self.thread_name_prefix + name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def schedule(self, name: str, action: Callable[[], None], delay_ms: int, period_ms: int) -> None:
        """Run `action` after delay_ms, then every period_ms until shutdown."""
        assert period_ms > 0, period_ms

        def loop() -> None:
            if self._stop.wait(max(delay_ms, 0) / 1000):
                return
            while True:
                self._run(name, action)
                if self._stop.wait(period_ms / 1000):
                    return
        self._spawn(name, loop)

    def schedule_once(self, name: str, action: Callable[[], None], delay_ms: int = 0) -> None:
        def once() -> None:
            if not self._stop.wait(max(delay_ms, 0) / 1000):
                self._run(name, action)
        self._spawn(name, once)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout_s)
