"""CPython's cyclic garbage collector, set for the broker (Kafka sets the JVM's collector in
kafka-run-class.sh: G1 with a 20 ms pause target).

CPython collects its youngest generation after every 700 container objects allocated and
not yet freed, and promotes what is alive at that moment. The broker allocates in bursts
that die together: a request naming 1,000 partitions decodes into thousands of dicts and
tuples, and a DelayedFetch holds one entry per partition for up to max.wait.ms. With a
threshold of 700 a collection lands inside nearly every such burst, its objects age into
the oldest generation, and CPython runs a full collection whenever the promoted objects
reach a quarter of that generation. A full collection visits every object the broker
holds, ~100 per partition.

Measured with a /tmp probe: one topic of 1,000 partitions, a C producer pacing 20,000 x
100 B records/s for 20 s, one librdkafka consumer in a group reading them; three
alternated pairs of broker processes before and after this module, gc.callbacks timing
each collection in the broker:
- before: 5,067-6,035 young, 461-549 middle and 27-36 full collections (44-47 ms each,
  at most 57-62 ms), 1.7-2.1 s in all; the producer's p99 62, 64 and 64 ms;
- after: ~73 young, 6 middle and one full collection (13-22 ms), 41-54 ms in all; p99
  28, 28 and 29 ms.
With the topic already there when the broker started (a restart), p99 61-65 ms before and
28-36 ms after.

freeze_startup_objects: what the broker loaded at start (its logs, segments, indexes,
groups) lives until it stops; gc.freeze() moves it out of every later collection. It
runs after a full collection, so no garbage cycle is frozen with it.

Process-wide, so only `franz server start` (run_from_cli) calls these, never a broker
started inside another program's process.
"""

from __future__ import annotations

import gc
from typing import Final

YOUNG_COLLECTION_THRESHOLD: Final = 10_000


def configure_collector() -> None:
    """Collect the youngest generation after YOUNG_COLLECTION_THRESHOLD net allocations;
    the older generations keep CPython's ratios."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, oldest)


def freeze_startup_objects() -> int:
    """Collect, then exempt every object alive now from later collections; the number frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
