"""franz/server/append_thread.py: order, results, errors, cancellation and shutdown."""

from __future__ import annotations

import asyncio
import threading

import pytest

from franz.server.append_thread import THREAD_NAME, AppendThread

TIMEOUT_S = 10


def test_jobs_run_in_submission_order_on_one_named_thread():
    append_thread = AppendThread()
    ran: list[tuple[int, str]] = []
    settled: list[int] = []

    async def submit_many():
        loop = asyncio.get_running_loop()
        futures = [append_thread.submit(loop, lambda i=i: ran.append((i, threading.current_thread().name)) or i,
                                        (), lambda i=i: settled.append(i)) for i in range(200)]
        return await asyncio.wait_for(asyncio.gather(*futures), TIMEOUT_S)

    try:
        assert asyncio.run(submit_many()) == list(range(200))
    finally:
        append_thread.shutdown()
    assert ran == [(i, THREAD_NAME) for i in range(200)]
    assert settled == list(range(200))


def test_an_exception_reaches_the_awaiting_coroutine_and_later_jobs_still_run():
    append_thread = AppendThread()

    def fail():
        raise ValueError("no room")

    async def submit():
        loop = asyncio.get_running_loop()
        failing = append_thread.submit(loop, fail, (), lambda: None)
        after = append_thread.submit(loop, lambda x: x * 2, (21,), lambda: None)
        with pytest.raises(ValueError, match="no room"):
            await asyncio.wait_for(failing, TIMEOUT_S)
        return await asyncio.wait_for(after, TIMEOUT_S)

    try:
        assert asyncio.run(submit()) == 42
    finally:
        append_thread.shutdown()


def test_a_job_whose_awaiter_was_cancelled_still_runs_and_settles():
    # A produce already read is appended even if its client went away meanwhile, and the
    # loop learns that it ran (ReplicaManager counts pending appends with on_settled).
    append_thread = AppendThread()
    release = threading.Event()
    ran, settled = [], []

    async def cancel_while_queued():
        loop = asyncio.get_running_loop()
        blocker = append_thread.submit(loop, release.wait, (TIMEOUT_S,), lambda: settled.append("blocker"))
        queued = append_thread.submit(loop, ran.append, ("queued",), lambda: settled.append("queued"))
        queued.cancel()
        release.set()
        await asyncio.wait_for(blocker, TIMEOUT_S)
        for _ in range(1000):  # bounded: the cancelled job's settle comes through the loop
            if "queued" in settled:
                break
            await asyncio.sleep(0.01)

    try:
        asyncio.run(cancel_while_queued())
    finally:
        append_thread.shutdown()
    assert ran == ["queued"] and settled == ["blocker", "queued"]


def test_shutdown_runs_what_was_submitted_then_refuses_more():
    append_thread = AppendThread()
    ran = []

    async def submit_then_shut_down():
        loop = asyncio.get_running_loop()
        for i in range(5):
            append_thread.submit(loop, ran.append, (i,), lambda: None)
        append_thread.shutdown(wait=True)
        with pytest.raises(RuntimeError, match="shut down"):
            append_thread.submit(loop, ran.append, (99,), lambda: None)

    asyncio.run(submit_then_shut_down())
    assert ran == [0, 1, 2, 3, 4]
    append_thread.shutdown()  # a second shutdown is a no-op


def test_a_job_finishing_after_its_loop_closed_is_dropped_quietly():
    append_thread = AppendThread()
    release = threading.Event()

    async def leave_a_job_behind():
        append_thread.submit(asyncio.get_running_loop(), release.wait, (TIMEOUT_S,), lambda: None)

    asyncio.run(leave_a_job_behind())  # the loop is closed when this returns
    release.set()
    thread = append_thread._thread
    assert thread is not None and thread.is_alive()  # it survived the closed loop
    append_thread.shutdown(wait=True)
    assert not thread.is_alive()


def test_idle_time_is_the_wait_for_jobs_not_the_jobs():
    """As a Kafka request handler's: a job that blocks (here in sleep, as a write blocks on the
    disk) is busy time; the time between jobs, and before the thread started, is idle."""
    import time
    append_thread = AppendThread()

    async def job_of(seconds: float) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.wait_for(append_thread.submit(loop, time.sleep, (seconds,), lambda: None), TIMEOUT_S)

    try:
        start_ns, start_idle_ns = time.monotonic_ns(), append_thread.idle_ns()
        time.sleep(0.1)  # not started yet: waiting all the same
        assert append_thread.idle_ns() - start_idle_ns >= 100_000_000
        before_ns, before_idle_ns = time.monotonic_ns(), append_thread.idle_ns()
        asyncio.run(job_of(0.3))
        after_ns, after_idle_ns = time.monotonic_ns(), append_thread.idle_ns()
        assert after_idle_ns - before_idle_ns <= (after_ns - before_ns) - 300_000_000
        time.sleep(0.1)
        assert append_thread.idle_ns() - after_idle_ns >= 100_000_000
        assert append_thread.idle_ns() <= time.monotonic_ns() - start_ns + start_idle_ns
    finally:
        append_thread.shutdown()
