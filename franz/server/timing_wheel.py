"""Hierarchical timing wheels for delayed operations (org.apache.kafka.server.util.timer).

Owns TimerTask (something to run after a delay, cancellable), TimerTaskEntry
(a task's place in a bucket), TimerTaskList (a bucket: a doubly linked ring of
entries sharing one expiration), TimingWheel (wheel_size buckets of tick_ms
each, with an overflow wheel of tick_ms * wheel_size created on demand for
delays beyond its interval) and SystemTimer (the wheel plus the queue of
buckets ordered by expiration, driven by the asyncio loop).

How time moves: a bucket is queued (a heap keyed by its expiration, in place
of Kafka's DelayQueue) when its expiration is set. `SystemTimer.advance_clock`
waits on the loop until the earliest bucket is due (or a new, earlier bucket
is queued, or the timeout passes), advances the wheels to that bucket's time
and flushes it: each entry either runs (expired) or drops into a finer wheel.
Expired tasks run on the loop, in the coroutine that called advance_clock.

Invariants:
- A task runs at most once per add, never before its expiration (to the tick),
  and never after cancel() returned.
- While a bucket is queued its expiration does not change: a slot is reused
  for a later expiration only after the wheel has moved past it, which needs
  the bucket to have been polled and flushed first.
- `size()` counts the entries linked in buckets (cancel unlinks at once).

Thread safety: one re-entrant lock per SystemTimer guards every bucket, so
tasks may be added or cancelled from any thread; advance_clock runs on the
loop. Tasks never run under the lock.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Final

logger = logging.getLogger(__name__)

TICK_MS_DEFAULT: Final = 1
WHEEL_SIZE_DEFAULT: Final = 20
_NEVER_MS: Final = 2**63 - 1


def hi_res_clock_ms() -> int:
    """Monotonic milliseconds (Kafka's Time.hiResClockMs)."""
    return time.monotonic_ns() // 1_000_000


class TimerTask:
    """Work to run once `delay_ms` after it is added to a timer. Subclasses define run()."""

    def __init__(self, delay_ms: int) -> None:
        # A negative delay (a client's timeout of -1) is due at once, as Kafka's timer finds
        # such an entry already expired when it is added.
        self.delay_ms = max(delay_ms, 0)
        self._timer_task_entry: TimerTaskEntry | None = None

    def run(self) -> None:
        raise NotImplementedError

    def cancel(self) -> None:
        entry = self._timer_task_entry
        self._timer_task_entry = None  # from here on every entry of this task is cancelled
        if entry is not None:
            entry.remove()

    def is_cancelled(self) -> bool:
        return self._timer_task_entry is None

    def _set_timer_task_entry(self, entry: TimerTaskEntry) -> None:
        # A task re-added while still held by an older entry leaves that entry first.
        old = self._timer_task_entry
        if old is not None and old is not entry:
            old.remove()
        self._timer_task_entry = entry


class TimerTaskEntry:
    __slots__ = ("timer_task", "expiration_ms", "list", "next", "prev")

    def __init__(self, timer_task: TimerTask | None, expiration_ms: int) -> None:
        self.timer_task = timer_task
        self.expiration_ms = expiration_ms
        self.list: TimerTaskList | None = None
        self.next: TimerTaskEntry | None = None
        self.prev: TimerTaskEntry | None = None
        if timer_task is not None:
            timer_task._set_timer_task_entry(self)

    def cancelled(self) -> bool:
        assert self.timer_task is not None
        return self.timer_task._timer_task_entry is not self

    def remove(self) -> None:
        # The entry may be moving between buckets on another thread: retry until
        # it is in none (Kafka's TimerTaskEntry.remove).
        current = self.list
        for _ in range(1000):
            if current is None:
                return
            current.remove(self)
            current = self.list
        raise AssertionError("timer task entry kept moving between buckets")


class _TaskCounter:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class TimerTaskList:
    """One bucket: entries in a ring around a sentinel root; root.next is the head."""

    def __init__(self, task_counter: _TaskCounter, lock: threading.RLock) -> None:
        self._task_counter = task_counter
        self._lock = lock
        self.expiration_ms = -1
        self._root = TimerTaskEntry(None, -1)
        self._root.next = self._root.prev = self._root

    def set_expiration(self, expiration_ms: int) -> bool:
        """Set the bucket's expiration; True iff it changed (the bucket must be queued)."""
        with self._lock:
            changed = self.expiration_ms != expiration_ms
            self.expiration_ms = expiration_ms
            return changed

    def foreach(self, f: Callable[[TimerTask], None]) -> None:
        with self._lock:
            entries = list(self._entries())
        for entry in entries:
            if not entry.cancelled():
                f(entry.timer_task)

    def _entries(self):
        entry = self._root.next
        while entry is not self._root:
            yield entry
            entry = entry.next

    def add(self, entry: TimerTaskEntry) -> None:
        with self._lock:
            entry.remove()
            tail = self._root.prev
            entry.next, entry.prev, entry.list = self._root, tail, self
            tail.next = entry
            self._root.prev = entry
            self._task_counter.value += 1

    def remove(self, entry: TimerTaskEntry) -> None:
        with self._lock:
            if entry.list is self:
                entry.next.prev = entry.prev
                entry.prev.next = entry.next
                entry.next = entry.prev = entry.list = None
                self._task_counter.value -= 1

    def flush(self, f: Callable[[TimerTaskEntry], None]) -> None:
        """Unlink every entry, hand each to f, and mark the bucket unqueued."""
        with self._lock:
            entries = list(self._entries())
            for entry in entries:
                self.remove(entry)
            self.expiration_ms = -1
            for entry in entries:
                f(entry)


class TimingWheel:
    """wheel_size buckets of tick_ms; delays past the interval go to the overflow wheel."""

    def __init__(self, tick_ms: int, wheel_size: int, start_ms: int, task_counter: _TaskCounter,
                 offer: Callable[[TimerTaskList], None], lock: threading.RLock) -> None:
        assert tick_ms >= 1 and wheel_size >= 2, (tick_ms, wheel_size)
        self.tick_ms = tick_ms
        self.wheel_size = wheel_size
        self.interval_ms = tick_ms * wheel_size
        self._task_counter = task_counter
        self._offer = offer
        self._lock = lock
        self._buckets = [TimerTaskList(task_counter, lock) for _ in range(wheel_size)]
        self.current_time_ms = start_ms - (start_ms % tick_ms)  # a multiple of tick_ms
        self.overflow_wheel: TimingWheel | None = None

    def add(self, entry: TimerTaskEntry) -> bool:
        """Place the entry in a bucket; False if it is cancelled or already expired."""
        expiration = entry.expiration_ms
        if entry.cancelled():
            return False
        if expiration < self.current_time_ms + self.tick_ms:
            return False
        if expiration < self.current_time_ms + self.interval_ms:
            virtual_id = expiration // self.tick_ms
            bucket = self._buckets[virtual_id % self.wheel_size]
            bucket.add(entry)
            # Queue the bucket only when its expiration changes: the wheel moved
            # on and reuses it; later adds in the same round see the same value.
            if bucket.set_expiration(virtual_id * self.tick_ms):
                self._offer(bucket)
            return True
        if self.overflow_wheel is None:
            with self._lock:
                if self.overflow_wheel is None:
                    self.overflow_wheel = TimingWheel(self.interval_ms, self.wheel_size, self.current_time_ms,
                                                      self._task_counter, self._offer, self._lock)
        return self.overflow_wheel.add(entry)

    def advance_clock(self, time_ms: int) -> None:
        if time_ms >= self.current_time_ms + self.tick_ms:
            self.current_time_ms = time_ms - (time_ms % self.tick_ms)
            if self.overflow_wheel is not None:
                self.overflow_wheel.advance_clock(self.current_time_ms)


class SystemTimer:
    """A TimingWheel with its queue of buckets, advanced by the asyncio loop."""

    def __init__(self, executor_name: str = "timer", tick_ms: int = TICK_MS_DEFAULT,
                 wheel_size: int = WHEEL_SIZE_DEFAULT, start_ms: int | None = None,
                 clock_ms: Callable[[], int] = hi_res_clock_ms) -> None:
        self.executor_name = executor_name
        self._clock_ms = clock_ms
        self._lock = threading.RLock()
        self._task_counter = _TaskCounter()
        self._queue: list[tuple[int, int, TimerTaskList]] = []  # (expiration_ms, seq, bucket)
        self._seq = itertools.count()
        self._timing_wheel = TimingWheel(tick_ms, wheel_size, clock_ms() if start_ms is None else start_ms,
                                         self._task_counter, self._offer, self._lock)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread_id: int | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._wait_until_ms = _NEVER_MS
        self._closed = False

    def add(self, timer_task: TimerTask) -> None:
        """Schedule the task to run `delay_ms` from now (at once if that is already past)."""
        with self._lock:
            entry = TimerTaskEntry(timer_task, timer_task.delay_ms + self._clock_ms())
            run_now = not self._timing_wheel.add(entry) and not entry.cancelled()
        if run_now:
            self._execute_soon(timer_task)

    async def advance_clock(self, timeout_ms: int) -> bool:
        """Wait up to timeout_ms for a bucket to expire, then expire every due
        bucket (running their expired tasks here). True iff a bucket expired."""
        loop = asyncio.get_running_loop()
        self._loop, self._loop_thread_id = loop, threading.get_ident()
        deadline_ms = self._clock_ms() + timeout_ms
        while True:
            if self._expire_due():
                return True
            now_ms = self._clock_ms()
            with self._lock:
                head_ms = self._queue[0][0] if self._queue else _NEVER_MS
                wake_ms = min(deadline_ms, head_ms)
                if now_ms >= deadline_ms and head_ms > now_ms:
                    return False
                waiter = loop.create_future()
                self._waiter, self._wait_until_ms = waiter, wake_ms
            handle = loop.call_later(max(0, wake_ms - now_ms) / 1000, _set_done, waiter)
            try:
                await waiter
            finally:
                handle.cancel()
                with self._lock:
                    self._waiter, self._wait_until_ms = None, _NEVER_MS

    def size(self) -> int:
        return self._task_counter.value

    def close(self) -> None:
        self._closed = True
        waiter = self._waiter
        if waiter is not None:
            self._call_on_loop(_set_done, waiter)

    def _expire_due(self) -> bool:
        expired: list[TimerTask] = []

        def reinsert(entry: TimerTaskEntry) -> None:
            if not self._timing_wheel.add(entry) and not entry.cancelled():
                expired.append(entry.timer_task)

        polled = False
        with self._lock:
            now_ms = self._clock_ms()
            while self._queue and self._queue[0][0] <= now_ms:
                expiration_ms, _, bucket = heapq.heappop(self._queue)
                assert bucket.expiration_ms == expiration_ms, (bucket.expiration_ms, expiration_ms)
                self._timing_wheel.advance_clock(expiration_ms)
                bucket.flush(reinsert)
                polled = True
        for task in expired:
            _run_task(task)
        return polled

    def _offer(self, bucket: TimerTaskList) -> None:
        # Called under the lock by TimingWheel.add.
        heapq.heappush(self._queue, (bucket.expiration_ms, next(self._seq), bucket))
        waiter = self._waiter
        if waiter is not None and bucket.expiration_ms < self._wait_until_ms:
            self._wait_until_ms = bucket.expiration_ms
            self._call_on_loop(_set_done, waiter)

    def _execute_soon(self, task: TimerTask) -> None:
        """Run an already-expired task: on the timer's loop (as Kafka hands it to
        its executor), or here when no loop drives the timer yet."""
        loop = self._loop
        if loop is None or loop.is_closed():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                _run_task(task)
                return
            loop.call_soon(_run_task, task)
            return
        self._call_on_loop(_run_task, task)

    def _call_on_loop(self, fn: Callable, *args) -> None:
        loop = self._loop
        assert loop is not None
        if threading.get_ident() == self._loop_thread_id:
            loop.call_soon(fn, *args)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _run_task(task: TimerTask) -> None:
    try:
        task.run()
    except Exception:
        logger.exception("Timer task %r failed", task)
