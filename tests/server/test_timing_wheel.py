"""TimingWheel and SystemTimer: a manual clock for exact expiry points, and the
real clock on a running loop with bounded waits (never an assertion on speed)."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from franz.server.timing_wheel import (
    SystemTimer,
    TimerTask,
    TimerTaskEntry,
    TimerTaskList,
    _TaskCounter,
    hi_res_clock_ms,
)

WAIT_S = 10.0


class ManualClock:
    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms


class RecordingTask(TimerTask):
    def __init__(self, delay_ms: int, ran: list, name=None, clock=hi_res_clock_ms) -> None:
        super().__init__(delay_ms)
        self.ran = ran
        self.name = delay_ms if name is None else name
        self.clock = clock
        self.ran_at_ms: int | None = None

    def run(self) -> None:
        self.ran_at_ms = self.clock()
        self.ran.append(self.name)


def advance_to(timer: SystemTimer, clock: ManualClock, time_ms: int) -> None:
    """Move the manual clock to time_ms one millisecond at a time, expiring as Kafka's reaper would."""
    async def run() -> None:
        while clock.now_ms < time_ms:
            clock.now_ms += 1
            while await timer.advance_clock(0):
                pass
    asyncio.run(run())


def test_tasks_expire_at_their_delay_and_not_before():
    clock = ManualClock()
    timer = SystemTimer("test", clock_ms=clock)
    ran: list[int] = []
    delays = [1, 2, 5, 19, 20, 21, 39, 40, 399, 400, 401, 1234]
    start_ms = clock.now_ms
    tasks = [RecordingTask(delay, ran, clock=clock) for delay in delays]
    for task in tasks:
        timer.add(task)
    assert timer.size() == len(delays)
    for delay in delays:
        advance_to(timer, clock, start_ms + delay - 1)
        assert delay not in ran
        advance_to(timer, clock, start_ms + delay)
        assert delay in ran
    assert sorted(ran) == ran == sorted(delays)
    assert all(task.ran_at_ms == start_ms + task.delay_ms for task in tasks)
    assert timer.size() == 0


def test_cancelled_tasks_never_run():
    clock = ManualClock()
    timer = SystemTimer("test", clock_ms=clock)
    ran: list[int] = []
    tasks = [RecordingTask(delay, ran) for delay in range(1, 101)]
    for task in tasks:
        timer.add(task)
    for task in tasks[::2]:
        task.cancel()
        assert task.is_cancelled()
    assert timer.size() == 50
    advance_to(timer, clock, clock.now_ms + 200)
    assert ran == [task.delay_ms for task in tasks[1::2]]


def test_long_delays_go_to_overflow_wheels_created_on_demand():
    clock = ManualClock(0)
    timer = SystemTimer("test", clock_ms=clock)
    wheel = timer._timing_wheel
    assert (wheel.tick_ms, wheel.wheel_size, wheel.overflow_wheel) == (1, 20, None)
    ran: list[int] = []
    timer.add(RecordingTask(15, ran))
    assert wheel.overflow_wheel is None
    timer.add(RecordingTask(10_000, ran))  # needs ticks of 1, 20, 400 and 8000 ms
    intervals = []
    level = wheel
    while level is not None:
        intervals.append(level.interval_ms)
        level = level.overflow_wheel
    assert intervals == [20, 400, 8000, 160_000]
    advance_to(timer, clock, 9_999)
    assert ran == [15]
    advance_to(timer, clock, 10_000)
    assert ran == [15, 10_000]


def test_task_already_expired_when_added_runs_on_the_loop_soon():
    async def run() -> list:
        clock = ManualClock()
        timer = SystemTimer("test", clock_ms=clock)  # the wheel's time is the clock's: nothing stale
        ran: list[int] = []
        timer.add(RecordingTask(0, ran))
        assert ran == [] and timer.size() == 0  # never run inside add(): the caller may hold locks
        for _ in range(100):
            await asyncio.sleep(0)
            if ran:
                break
        return ran
    assert asyncio.run(run()) == [0]


def test_re_adding_a_task_moves_it_instead_of_running_it_twice():
    clock = ManualClock()
    timer = SystemTimer("test", clock_ms=clock)
    ran: list[int] = []
    task = RecordingTask(10, ran, clock=clock)
    start_ms = clock.now_ms
    timer.add(task)
    task.delay_ms = 50
    timer.add(task)
    assert timer.size() == 1
    advance_to(timer, clock, start_ms + 100)
    assert ran == [10] and task.ran_at_ms == start_ms + 50


def test_a_failing_task_is_logged_and_the_others_still_run(caplog):
    class Failing(TimerTask):
        def run(self) -> None:
            raise RuntimeError("boom")

    clock = ManualClock()
    timer = SystemTimer("test", clock_ms=clock)
    ran: list[int] = []
    timer.add(Failing(5))
    timer.add(RecordingTask(5, ran))
    with caplog.at_level(logging.ERROR, logger="franz.server.timing_wheel"):
        advance_to(timer, clock, clock.now_ms + 10)
    assert ran == [5]
    assert any("boom" in (r.exc_text or "") or r.exc_info for r in caplog.records)


def test_timer_task_list_holds_an_entry_in_one_list_at_a_time():
    counter = _TaskCounter()
    lock = threading.RLock()
    first, second = TimerTaskList(counter, lock), TimerTaskList(counter, lock)
    tasks = [RecordingTask(10, []) for _ in range(10)]
    entries = [TimerTaskEntry(task, 10) for task in tasks]
    for entry in entries:
        first.add(entry)
    assert counter.value == 10
    for entry in entries[:4]:
        second.add(entry)  # moves it
    assert counter.value == 10
    seen_first, seen_second = [], []
    first.foreach(seen_first.append)
    second.foreach(seen_second.append)
    assert seen_first == tasks[4:] and seen_second == tasks[:4]
    tasks[5].cancel()
    assert counter.value == 9
    flushed = []
    first.flush(flushed.append)
    assert [entry.timer_task for entry in flushed] == tasks[4:5] + tasks[6:]
    assert counter.value == 4 and first.expiration_ms == -1


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_real_clock_expires_tasks_after_their_delay(loop_kind):
    async def run() -> list[RecordingTask]:
        timer = SystemTimer("test")
        ran: list[int] = []
        tasks = [RecordingTask(delay, ran, name=i) for i, delay in enumerate([30, 1, 7, 0, 120, 15, 2, 60])]
        added_ms = hi_res_clock_ms()
        for task in tasks:
            timer.add(task)
        for _ in range(1000):  # bounded: each call waits at most 100 ms
            if len(ran) == len(tasks):
                break
            await timer.advance_clock(100)
        assert sorted(ran) == list(range(len(tasks)))
        for task in tasks:
            assert task.ran_at_ms >= added_ms + task.delay_ms
        return tasks
    runner = asyncio.run
    if loop_kind == "uvloop":
        import uvloop
        runner = uvloop.run
    runner(run())


async def until_ran(timer: SystemTimer, waiting: asyncio.Future, ran: list) -> None:
    """Await the pending advance_clock(60 s), then keep advancing until the task ran.
    True from advance_clock means a bucket expired; when the wheel's time was
    stale that bucket may only cascade the task into a finer wheel."""
    await waiting
    for _ in range(100):
        if ran:
            return
        await timer.advance_clock(60_000)


def test_advance_clock_wakes_for_a_task_added_while_it_waits():
    async def run() -> None:
        timer = SystemTimer("test")
        ran: list[int] = []
        waiting = asyncio.ensure_future(timer.advance_clock(60_000))
        await asyncio.sleep(0.01)
        timer.add(RecordingTask(5, ran))
        await asyncio.wait_for(until_ran(timer, waiting, ran), WAIT_S)
        assert ran == [5]
    asyncio.run(run())


def test_task_added_from_another_thread_wakes_the_loop():
    async def run() -> None:
        timer = SystemTimer("test")
        ran: list[int] = []
        waiting = asyncio.ensure_future(timer.advance_clock(60_000))
        await asyncio.sleep(0.01)
        adder = threading.Thread(target=lambda: timer.add(RecordingTask(3, ran)))
        adder.start()
        await asyncio.wait_for(until_ran(timer, waiting, ran), WAIT_S)
        adder.join(WAIT_S)
        assert ran == [3]
    asyncio.run(run())


def test_advance_clock_returns_false_after_its_timeout_when_nothing_expires():
    async def run() -> None:
        timer = SystemTimer("test")
        timer.add(RecordingTask(60_000, []))
        assert await asyncio.wait_for(timer.advance_clock(10), WAIT_S) is False
        assert timer.size() == 1
    asyncio.run(run())
