"""The append thread: where produce appends run, one after another, off the event loop.

Kafka appends on its request handler threads. franz's handlers are coroutines on one
event loop, so an append that writes a large batch runs here instead, and the loop
goes on reading and answering meanwhile (the write releases the GIL).

Invariants: jobs run in the order they were submitted, one at a time; every job runs,
even when the coroutine awaiting it was cancelled meanwhile (a produce already read is
appended, as a Kafka handler thread appends a request whose client went away); each
job's `on_settled` runs on the loop once the job has run, before its result is given.

Why not ThreadPoolExecutor + asyncio.wrap_future: that hand-off makes a
concurrent.futures.Future (with its Condition), chains it to an asyncio future and
wakes the loop twice per job. A wake-up across threads is dear on this kind of VM, so
here a job is one queue put and one call_soon_threadsafe. bench/append_handoff_bench.py
prints the round trip of a no-op job both ways beside a bare thread ping-pong.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

THREAD_NAME = "append_0"


def _settle(future: asyncio.Future, result: Any, error: BaseException | None,
            on_settled: Callable[[], None]) -> None:
    on_settled()
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class AppendThread:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._shut_down = False
        # (ns idle before the current wait, when that wait began or 0): one tuple, so that a
        # reader on another thread sees both halves of one moment. The thread waits from its
        # creation, before it is started.
        self._idle = (0, time.monotonic_ns())

    def submit(self, loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], args: tuple,
               on_settled: Callable[[], None]) -> asyncio.Future:
        """Run fn(*args) after every job submitted before; the future completes on `loop`."""
        future = loop.create_future()
        if self._thread is None or self._shut_down:
            with self._start_lock:
                if self._shut_down:
                    raise RuntimeError("cannot append after the append thread was shut down")
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
                    self._thread.start()
        self._jobs.put((loop, future, fn, args, on_settled))
        return future

    def idle_ns(self) -> int:
        """Nanoseconds this thread has waited for a job since it was made, as a Kafka request
        handler's idle time is its wait for a request; from any thread."""
        idle_ns, waiting_since_ns = self._idle
        return idle_ns + (time.monotonic_ns() - waiting_since_ns if waiting_since_ns else 0)

    def _run(self) -> None:
        jobs, monotonic_ns = self._jobs, time.monotonic_ns
        while True:
            idle_ns, waiting_since_ns = self._idle
            job = jobs.get()
            self._idle = (idle_ns + monotonic_ns() - waiting_since_ns, 0)
            if job is None:
                return
            loop, future, fn, args, on_settled = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine, as an executor does
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error, on_settled)
            except RuntimeError:  # the loop is closed: nothing awaits this job any more
                pass
            del job, future, result, error  # drop references before blocking on the next job
            self._idle = (self._idle[0], monotonic_ns())

    def shutdown(self, wait: bool = True) -> None:
        """Run the jobs already submitted, then stop (joined when `wait`)."""
        with self._start_lock:
            thread, was_shut_down = self._thread, self._shut_down
            self._shut_down = True
        if thread is None or was_shut_down:
            return
        self._jobs.put(None)
        if wait:
            thread.join()
