"""franz.server.garbage_collector: bursts of short-lived objects stay out of the old generations,
and what startup loaded is left out of later collections."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from franz.server.garbage_collector import YOUNG_COLLECTION_THRESHOLD

# A burst like a decoded request naming many partitions: containers that all die together.
BURST = """
import gc, sys
from franz.server.garbage_collector import configure_collector
if sys.argv[1] == "configured":
    configure_collector()
gc.collect()
before = [generation["collections"] for generation in gc.get_stats()]
for _ in range(20):
    burst = [{"partition": i, "records": [i]} for i in range(3000)]
    del burst
print(*[generation["collections"] - b for generation, b in zip(gc.get_stats(), before)])
print(*gc.get_threshold())
"""


def _collections_during_bursts(mode: str) -> tuple[list[int], list[int]]:
    done = subprocess.run([sys.executable, "-c", BURST, mode], capture_output=True, text=True, timeout=60,
                          check=True, cwd=Path(__file__).resolve().parents[2])
    collections, threshold = done.stdout.splitlines()
    return [int(n) for n in collections.split()], [int(n) for n in threshold.split()]


def test_bursts_that_die_together_are_not_collected_midway():
    default, _ = _collections_during_bursts("default")
    configured, threshold = _collections_during_bursts("configured")
    # 6,000 containers per burst: CPython's threshold of 700 collects ~8 times inside each one.
    assert default[0] >= 20 * 6
    assert configured == [0, 0, 0]
    assert threshold == [YOUNG_COLLECTION_THRESHOLD, 10, 10]


FREEZE = """
import gc, weakref
from franz.server.garbage_collector import freeze_startup_objects
class Loaded:
    pass
kept = Loaded()
cycle = Loaded()
cycle.self = cycle
gone = weakref.ref(cycle)
del cycle
frozen = freeze_startup_objects()
print(frozen, gone() is None, any(o is kept for o in gc.get_objects()))
"""


def test_startup_objects_are_frozen_after_the_garbage_is_collected():
    done = subprocess.run([sys.executable, "-c", FREEZE], capture_output=True, text=True, timeout=60, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    frozen, cycle_collected, kept_still_collectable = done.stdout.split()
    assert int(frozen) > 0
    assert cycle_collected == "True"  # garbage is collected first, never frozen
    assert kept_still_collectable == "False"  # a frozen object is out of every generation


def test_the_broker_process_freezes_what_it_loaded_at_startup(broker_factory):
    broker = broker_factory()
    assert broker.wait_for_line("loaded at startup from garbage collection")
    line = next(line for line in broker.lines if "loaded at startup from garbage collection" in line)
    # The broker's own modules, config and logs: tens of thousands of objects.
    assert int(re.search(r"Exempted (\d+) objects", line).group(1)) > 10_000
