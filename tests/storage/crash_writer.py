"""A writer process for the crash tests: appends numbered records to one partition
through LogManager with flush.messages=1 and prints each acknowledged (flushed)
value, until it is killed. Run: python crash_writer.py DATA_DIR START_VALUE [compact]

With `compact`, the partition is a compacted topic with small segments and the
LogCleaner runs meanwhile: record n has key key_of(n) and is written at offset n,
so a crash mid-cleaning shows as a record away from its offset, or a key whose
latest acknowledged record is gone."""

import sys
import time

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage.cleaner import CleanerConfig
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager

KEYS = 97


def key_of(value: int) -> bytes:
    return b"key-%d" % (value * 7919 % KEYS)


def main() -> None:
    data_dir, start = sys.argv[1], int(sys.argv[2])
    compact = sys.argv[3:] == ["compact"]
    props = {"segment.bytes": 4096, "flush.messages": 1, "index.interval.bytes": 256,
             "message.timestamp.after.max.ms": 2**62}
    if compact:
        props.update({"segment.bytes": 1024, "cleanup.policy": "compact", "min.cleanable.dirty.ratio": 0.01,
                      "file.delete.delay.ms": 0})
    config = LogConfig.from_props(props)
    manager = LogManager([data_dir], config, initial_task_delay_ms=10**9, retention_check_ms=10**9,
                         cleaner_config=CleanerConfig(backoff_ms=1, dedupe_buffer_size=1 << 20))
    manager.startup(start_background_tasks=compact)  # the background tasks include the cleaner
    partition_log = manager.get_or_create_log("crash", 0)
    value = start
    while True:
        count = 1 if compact else 1 + value % 7
        records = [SimpleRecord(b"%d" % (value + i), key=key_of(value + i) if compact else None,
                                timestamp=int(time.time() * 1000)) for i in range(count)]
        partition_log.append_as_leader(MemoryRecords(bytearray(build_batch(records))), 0)
        partition_log.maybe_increment_high_watermark(partition_log.log_end_offset)
        value += count
        # flush.messages=1: the append above was fsynced before it returned.
        print(value - 1, flush=True)


if __name__ == "__main__":
    main()
