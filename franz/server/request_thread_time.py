"""The time a request spends being worked on, which request_percentage quotas count
(Kafka's RequestChannel.Request.requestThreadTimeNanos, ClientRequestQuotaManager).

In Kafka it is the time on a request handler thread. franz's handlers are
coroutines on the event loop, and produce appends may run on the append
thread: `timed(coroutine)` adds up the slices in which the coroutine runs on
the loop (not the time it waits for I/O, the purgatory or another thread, as
a Kafka handler thread does not hold a waiting request either), and
`on_worker_thread(fn)` adds the time a job handed to another thread spends
running for that request. Both go to the request's counter, found through a
context variable that the request's task carries.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Coroutine, Generator
from typing import Any

_COUNTER: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("request_thread_ns", default=None)


class Timed:
    """An awaitable running `coroutine` and adding its running time on the loop to `ns`."""

    def __init__(self, coroutine: Coroutine) -> None:
        self._coroutine = coroutine
        self.counter = [0, 0, 0]  # ns counted, start of the slice running now, taken (1) by take_current_ns

    def __await__(self) -> Generator[Any, Any, Any]:
        token = _COUNTER.set(self.counter)
        coroutine, counter = self._coroutine, self.counter
        sent, thrown = None, None
        try:
            while True:
                start = counter[1] = time.perf_counter_ns()
                try:
                    yielded = coroutine.send(sent) if thrown is None else coroutine.throw(thrown)
                except StopIteration as stop:
                    counter[0] += time.perf_counter_ns() - start
                    return stop.value
                counter[0] += time.perf_counter_ns() - start
                sent, thrown = None, None
                try:
                    sent = yield yielded
                except BaseException as exc:  # noqa: BLE001 - handed to the coroutine (cancellation included)
                    thrown = exc
        finally:
            _COUNTER.reset(token)

    @property
    def ns(self) -> int:
        return self.counter[0]

    @property
    def taken(self) -> bool:
        """Whether the handler recorded its time itself (take_current_ns), before it ended."""
        return bool(self.counter[2])


def take_current_ns() -> int | None:
    """The running time so far of the request being timed now, for a handler that must record
    it before it answers (a fetch answered empty when throttled); None when none is timed."""
    counter = _COUNTER.get()
    if counter is None:
        return None
    counter[2] = 1
    return counter[0] + time.perf_counter_ns() - counter[1]


def on_worker_thread(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` counting its running time to the request being timed now (if any), for another thread."""
    counter = _COUNTER.get()
    if counter is None:
        return fn

    def run(*args: Any) -> Any:
        start = time.perf_counter_ns()
        try:
            return fn(*args)
        finally:
            counter[0] += time.perf_counter_ns() - start
    return run
