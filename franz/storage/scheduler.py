"""KafkaScheduler: named periodic and one-shot background tasks on a bounded pool of threads.

Kafka's KafkaScheduler is a ScheduledThreadPoolExecutor of `background.threads` threads (10 by
default): a task waits in a queue ordered by when it is due, and at most that many run at once,
however many are scheduled. Deleting a thousand partitions schedules a thousand file deletions
`file.delete.delay.ms` ahead; they wait as queue entries, not as a thousand sleeping threads.

- A periodic task runs at a fixed rate (scheduleAtFixedRate): each run is due one period after the
  previous run was due, and never overlaps itself.
- A task that raises is logged and keeps its schedule (Kafka logs and goes on).
- `shutdown()` drops the tasks not yet due (Kafka's executor neither runs delayed tasks nor repeats
  periodic ones after shutdown), waits for the running ones, bounded, and ignores later schedules.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

DEFAULT_BACKGROUND_THREADS = 10


@dataclass(order=True)
class _ScheduledTask:
    due: float  # time.monotonic() seconds
    sequence: int  # ties run in the order they were scheduled
    name: str = field(compare=False)
    action: Callable[[], None] = field(compare=False)
    period_s: float | None = field(compare=False)


class KafkaScheduler:
    def __init__(self, threads: int = DEFAULT_BACKGROUND_THREADS,
                 thread_name_prefix: str = "kafka-scheduler-") -> None:
        if threads < 1:
            raise ValueError(f"The number of threads should be positive, but it is {threads}")
        self.threads = threads
        self.thread_name_prefix = thread_name_prefix
        self._queue: list[_ScheduledTask] = []
        self._sequence = itertools.count()
        self._condition = threading.Condition()
        self._workers: list[threading.Thread] = []
        self._idle_workers = 0
        self._stopped = False

    @property
    def pending_tasks(self) -> int:
        with self._condition:
            return len(self._queue)

    @property
    def worker_threads(self) -> int:
        with self._condition:
            return len(self._workers)

    def schedule(self, name: str, action: Callable[[], None], delay_ms: int, period_ms: int) -> None:
        """Run `action` after delay_ms, then every period_ms until shutdown."""
        assert period_ms > 0, period_ms
        self._add(name, action, delay_ms, period_ms / 1000)

    def schedule_once(self, name: str, action: Callable[[], None], delay_ms: int = 0) -> None:
        self._add(name, action, delay_ms, None)

    def _add(self, name: str, action: Callable[[], None], delay_ms: int, period_s: float | None) -> None:
        with self._condition:
            if self._stopped:
                log.info("Kafka scheduler is not running at the time task '%s' is scheduled. The task is ignored.",
                         name)
                return
            task = _ScheduledTask(time.monotonic() + max(delay_ms, 0) / 1000, next(self._sequence), name, action,
                                  period_s)
            heapq.heappush(self._queue, task)
            # A worker per queued task up to the pool's size, as the executor adds core threads.
            if len(self._queue) > self._idle_workers and len(self._workers) < self.threads:
                worker = threading.Thread(target=self._work, name=f"{self.thread_name_prefix}{len(self._workers)}",
                                          daemon=True)
                self._workers.append(worker)
                worker.start()
            elif self._queue[0] is task:
                # Every idle worker may be waiting for a later task: one of them must look again.
                self._condition.notify()

    def _take(self) -> _ScheduledTask | None:
        """The next task once it is due, or None at shutdown. Called holding the condition."""
        while not self._stopped:
            if not self._queue:
                self._condition.wait()
                continue
            wait_s = self._queue[0].due - time.monotonic()
            if wait_s <= 0:
                return heapq.heappop(self._queue)
            self._condition.wait(wait_s)
        return None

    def _work(self) -> None:
        with self._condition:
            self._idle_workers += 1
        while True:
            with self._condition:
                task = self._take()
                if task is None:
                    self._idle_workers -= 1
                    return
                self._idle_workers -= 1
            try:
                task.action()
            except Exception:  # noqa: BLE001 - a failing task must not kill the scheduler
                log.exception("Uncaught exception in scheduled task '%s'", task.name)
            with self._condition:
                self._idle_workers += 1
                if task.period_s is not None and not self._stopped:
                    task.due += task.period_s
                    task.sequence = next(self._sequence)
                    heapq.heappush(self._queue, task)

    def shutdown(self, timeout_s: float = 10.0) -> None:
        with self._condition:
            self._stopped = True
            self._queue.clear()
            self._condition.notify_all()
            workers = list(self._workers)
        for worker in workers:
            if worker is not threading.current_thread():
                worker.join(timeout_s)
