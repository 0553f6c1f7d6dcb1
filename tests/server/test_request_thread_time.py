"""request_thread_time: a handler's time counts its running slices on the loop and its jobs on
another thread, never the time it waits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

from franz.server.request_thread_time import Timed, on_worker_thread, take_current_ns

BUSY_S, WAIT_S = 0.02, 0.1


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_handler_is_counted_while_it_runs_and_not_while_it_waits():
    async def handler() -> str:
        _spin(BUSY_S)
        await asyncio.sleep(WAIT_S)
        return "answer"

    async def main() -> tuple[str, int, float]:
        start = time.perf_counter()
        timed = Timed(handler())
        result = await timed
        return result, timed.ns, time.perf_counter() - start

    result, ns, elapsed_s = asyncio.run(main())
    assert result == "answer"
    assert BUSY_S * 1e9 <= ns <= (elapsed_s - WAIT_S) * 1e9


def test_a_job_on_another_thread_counts_for_the_request_that_handed_it_over():
    pool = concurrent.futures.ThreadPoolExecutor(1)

    async def handler() -> int:
        return await asyncio.wrap_future(pool.submit(on_worker_thread(lambda: (_spin(BUSY_S), 7)[1])))

    async def main() -> tuple[int, int]:
        timed = Timed(handler())
        return await timed, timed.ns

    try:
        result, ns = asyncio.run(main())
    finally:
        pool.shutdown()
    assert result == 7 and ns >= BUSY_S * 1e9
    assert on_worker_thread(len) is len  # outside a timed request nothing is wrapped


def test_a_cancelled_handler_sees_its_cancellation():
    seen = []

    async def handler() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def request() -> None:
        await Timed(handler())

    async def main() -> None:
        task = asyncio.ensure_future(request())
        await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()

    asyncio.run(main())
    assert seen == ["cancelled"]


def test_a_handler_can_take_its_time_so_far_and_then_it_is_not_counted_again():
    async def handler() -> int | None:
        _spin(BUSY_S)
        return take_current_ns()

    async def main():
        timed = Timed(handler())
        return await timed, timed.taken

    so_far, taken = asyncio.run(main())
    assert so_far >= BUSY_S * 1e9 and taken
    assert take_current_ns() is None  # outside a timed request
