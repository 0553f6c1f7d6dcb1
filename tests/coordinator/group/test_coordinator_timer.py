"""CoordinatorTimer: one timer a key, replaced when scheduled again, gone before its action runs."""

from __future__ import annotations

import asyncio

from franz.coordinator.group.coordinator_timer import CoordinatorTimer


def _run(scenario):
    return asyncio.run(asyncio.wait_for(scenario(), 10))


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.005)


def test_scheduling_a_key_again_replaces_its_timer_and_if_absent_keeps_it():
    async def scenario():
        timer, fired = CoordinatorTimer(), []
        timer.schedule("k", 0, lambda: fired.append("first"))
        timer.schedule("k", 0, lambda: fired.append("second"))
        timer.schedule_if_absent("k", 0, lambda: fired.append("third"))
        await _until(lambda: fired)
        await asyncio.sleep(0.02)
        return fired, timer.is_scheduled("k")
    assert _run(scenario) == (["second"], False)


def test_a_fired_timer_is_gone_before_its_action_so_the_action_can_schedule_its_key_again():
    async def scenario():
        timer, fired = CoordinatorTimer(), []

        def action() -> None:
            fired.append(timer.is_scheduled("k"))
            if len(fired) < 2:
                timer.schedule("k", 0, action)
        timer.schedule("k", 0, action)
        await _until(lambda: len(fired) == 2)
        return fired
    assert _run(scenario) == [False, False]


def test_cancelled_timers_never_fire():
    async def scenario():
        timer, fired = CoordinatorTimer(), []
        timer.schedule("a", 0, lambda: fired.append("a"))
        timer.schedule("b", 0, lambda: fired.append("b"))
        timer.schedule("c", 0, lambda: fired.append("c"))
        timer.cancel("a")
        timer.cancel_all()
        timer.schedule("d", 0, lambda: fired.append("d"))
        await _until(lambda: fired)
        await asyncio.sleep(0.02)
        return fired
    assert _run(scenario) == ["d"]


def test_a_deadline_is_the_loop_time_the_timer_fires_at_and_none_once_gone():
    async def scenario():
        timer, loop = CoordinatorTimer(), asyncio.get_running_loop()
        before = loop.time()
        timer.schedule("k", 60_000, lambda: None)
        deadline = timer.deadline("k")
        timer.cancel("k")
        return before + 60 <= deadline <= loop.time() + 60, timer.deadline("k")
    assert _run(scenario) == (True, None)
