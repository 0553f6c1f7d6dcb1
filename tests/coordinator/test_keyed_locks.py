"""KeyedLocks: one lock per key, serializing its users, and gone once nobody holds or awaits it."""

from __future__ import annotations

import asyncio

import pytest

from franz.coordinator.keyed_locks import KeyedLocks


def test_users_of_one_key_run_one_at_a_time_in_arrival_order_and_other_keys_do_not_wait():
    async def scenario():
        locks, order = KeyedLocks(), []

        async def user(key: str, name: str, hold: asyncio.Event | None = None) -> None:
            async with locks(key):
                order.append(("in", name))
                if hold is not None:
                    await hold.wait()
                order.append(("out", name))

        release = asyncio.Event()
        first = asyncio.create_task(user("a", "first", release))
        await asyncio.sleep(0)
        second = asyncio.create_task(user("a", "second"))
        third = asyncio.create_task(user("a", "third"))
        await asyncio.sleep(0)
        await asyncio.wait_for(user("b", "other"), 1)  # while "a" is held
        assert locks.locked("a") and not locks.locked("b")
        assert locks.in_use("a") and not locks.in_use("b")
        release.set()
        await asyncio.wait_for(asyncio.gather(first, second, third), 1)
        return order, len(locks)

    order, left = asyncio.run(scenario())
    assert order == [("in", "first"), ("in", "other"), ("out", "other"), ("out", "first"),
                     ("in", "second"), ("out", "second"), ("in", "third"), ("out", "third")]
    assert left == 0


def test_a_key_leaves_no_entry_after_its_body_raises_or_its_waiter_is_cancelled():
    async def scenario():
        locks = KeyedLocks()
        with pytest.raises(ValueError):
            async with locks("a"):
                raise ValueError("body failed")
        assert len(locks) == 0

        release = asyncio.Event()

        async def holder() -> None:
            async with locks("b"):
                await release.wait()

        async def waiter() -> None:
            async with locks("b"):
                raise AssertionError("a cancelled waiter must not run")

        held = asyncio.create_task(holder())
        await asyncio.sleep(0)
        waiting = asyncio.create_task(waiter())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        release.set()
        await asyncio.wait_for(held, 1)
        return len(locks), locks.locked("b")

    assert asyncio.run(scenario()) == (0, False)


def test_ten_thousand_keys_used_once_each_leave_nothing_behind():
    async def scenario():
        locks = KeyedLocks()
        for index in range(10_000):
            async with locks(f"id-{index}"):
                pass
        return len(locks)

    assert asyncio.run(scenario()) == 0
