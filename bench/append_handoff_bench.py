"""The cost of handing a produce append to the append thread and getting its result back.

Run:  .venv/bin/python bench/append_handoff_bench.py [--jobs 20000] [--runs 5]

On a uvloop loop (as the broker runs, with its GIL switch interval), one coroutine
awaits --jobs no-op jobs one after another, each run on another thread. Rows, per
hand-off (wall and CPU of the process, medians of --runs):

- limit:         two threads passing a token through queue.SimpleQueue and back: the
                 floor of any round trip between threads on this machine.
- executor:      ThreadPoolExecutor(1).submit + add_done_callback + asyncio.wrap_future,
                 how franz handed appends over before franz/server/append_thread.py.
- AppendThread:  franz/server/append_thread.py: one queue put, one call_soon_threadsafe.

Not a timed test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import resource
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from franz.server.append_thread import AppendThread  # noqa: E402
from franz.server.kafka_server import GIL_SWITCH_INTERVAL_S  # noqa: E402
from franz.server.socket_server import new_event_loop  # noqa: E402


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def ping_pong(jobs: int) -> tuple[float, float]:
    there, back = queue.SimpleQueue(), queue.SimpleQueue()

    def echo() -> None:
        while (token := there.get()) is not None:
            back.put(token)

    thread = threading.Thread(target=echo)
    thread.start()
    wall, cpu = time.perf_counter(), cpu_s()
    for token in range(jobs):
        there.put(token)
        back.get()
    wall, cpu = time.perf_counter() - wall, cpu_s() - cpu
    there.put(None)
    thread.join()
    return wall / jobs, cpu / jobs


def on_loop(jobs: int, run_one) -> tuple[float, float]:
    async def run_all() -> tuple[float, float]:
        wall, cpu = time.perf_counter(), cpu_s()
        for _ in range(jobs):
            await run_one()
        return (time.perf_counter() - wall) / jobs, (cpu_s() - cpu) / jobs

    loop = new_event_loop()
    try:
        return loop.run_until_complete(run_all())
    finally:
        loop.close()


def executor(jobs: int) -> tuple[float, float]:
    pool = ThreadPoolExecutor(max_workers=1)

    async def run_one() -> None:
        loop = asyncio.get_running_loop()
        job = pool.submit(int)
        job.add_done_callback(lambda _job: loop.call_soon_threadsafe(int))
        await asyncio.wrap_future(job)

    try:
        return on_loop(jobs, run_one)
    finally:
        pool.shutdown()


def append_thread(jobs: int) -> tuple[float, float]:
    worker = AppendThread()

    async def run_one() -> None:
        await worker.submit(asyncio.get_running_loop(), int, (), int)

    try:
        return on_loop(jobs, run_one)
    finally:
        worker.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    rows = {"limit (thread ping-pong)": ping_pong, "executor + wrap_future": executor, "AppendThread": append_thread}
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
    for _ in range(args.runs):  # rows alternate within each run, so drift falls on all of them
        for name, row in rows.items():
            results[name].append(row(args.jobs))
    print(f"{'per hand-off':26s} {'wall us':>8s} {'cpu us':>8s}")
    for name, samples in results.items():
        wall = statistics.median(s[0] for s in samples) * 1e6
        cpu = statistics.median(s[1] for s in samples) * 1e6
        print(f"{name:26s} {wall:8.1f} {cpu:8.1f}")


if __name__ == "__main__":
    main()
