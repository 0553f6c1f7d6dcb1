"""KafkaScheduler: a bounded pool that runs tasks when due, in order, and forgets them at shutdown."""

from __future__ import annotations

import threading

import pytest

from franz.storage.scheduler import KafkaScheduler

WAIT_S = 10


def test_many_delayed_tasks_wait_in_the_queue_not_on_threads():
    scheduler = KafkaScheduler(threads=3)
    before = threading.active_count()
    try:
        for i in range(500):
            scheduler.schedule_once(f"delete-{i}", lambda: None, delay_ms=60_000)
        assert scheduler.pending_tasks == 500
        assert scheduler.worker_threads == 3
        assert threading.active_count() - before == 3
    finally:
        scheduler.shutdown()


def test_tasks_run_on_at_most_the_pool_size_threads_all_of_them():
    scheduler = KafkaScheduler(threads=2)
    ran: list[int] = []
    thread_ids: set[int] = set()
    done = threading.Event()
    lock = threading.Lock()

    def task(i: int) -> None:
        with lock:
            ran.append(i)
            thread_ids.add(threading.get_ident())
            if len(ran) == 200:
                done.set()
    try:
        for i in range(200):
            scheduler.schedule_once("task", lambda i=i: task(i))
        assert done.wait(WAIT_S)
        assert sorted(ran) == list(range(200))
        assert 1 <= len(thread_ids) <= 2
    finally:
        scheduler.shutdown()


def test_a_task_due_sooner_runs_first_even_when_scheduled_later():
    scheduler = KafkaScheduler(threads=1)
    order: list[str] = []
    done = threading.Event()
    try:
        scheduler.schedule_once("late", lambda: (order.append("late"), done.set()), delay_ms=300)
        scheduler.schedule_once("soon", lambda: order.append("soon"), delay_ms=0)
        assert done.wait(WAIT_S)
        assert order == ["soon", "late"]
    finally:
        scheduler.shutdown()


def test_a_periodic_task_repeats_and_survives_its_own_exceptions():
    scheduler = KafkaScheduler(threads=1)
    runs: list[int] = []
    third = threading.Event()

    def flaky() -> None:
        runs.append(len(runs))
        if len(runs) >= 3:
            third.set()
        raise RuntimeError("disk on fire")
    try:
        scheduler.schedule("flaky", flaky, delay_ms=0, period_ms=5)
        assert third.wait(WAIT_S)
    finally:
        scheduler.shutdown()
    count = len(runs)
    assert scheduler.pending_tasks == 0
    assert len(runs) == count  # nothing runs after shutdown


def test_shutdown_drops_tasks_not_yet_due_and_ignores_new_ones():
    scheduler = KafkaScheduler(threads=2)
    ran = threading.Event()
    scheduler.schedule_once("later", ran.set, delay_ms=60_000)
    scheduler.shutdown()
    scheduler.schedule_once("after", ran.set)
    assert scheduler.pending_tasks == 0
    assert not ran.is_set()


def test_shutdown_waits_for_a_running_task():
    scheduler = KafkaScheduler(threads=1)
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def long_task() -> None:
        started.set()
        release.wait(WAIT_S)
        finished.set()
    scheduler.schedule_once("long", long_task)
    assert started.wait(WAIT_S)
    threading.Timer(0.05, release.set).start()
    scheduler.shutdown()
    assert finished.is_set()


def test_a_pool_without_threads_is_refused():
    with pytest.raises(ValueError, match="should be positive"):
        KafkaScheduler(threads=0)
