"""A writer process for the crash test: appends numbered records to one partition
through LogManager with flush.messages=1 and prints each acknowledged (flushed)
value, until it is killed. Run: python crash_writer.py DATA_DIR START_VALUE"""

import sys
import time

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager


def main() -> None:
    data_dir, start = sys.argv[1], int(sys.argv[2])
    config = LogConfig.from_props({"segment.bytes": 4096, "flush.messages": 1, "index.interval.bytes": 256,
                                   "message.timestamp.after.max.ms": 2**62})
    manager = LogManager([data_dir], config, initial_task_delay_ms=10**9)
    manager.startup(start_background_tasks=False)
    partition_log = manager.get_or_create_log("crash", 0)
    value = start
    while True:
        count = 1 + value % 7
        records = [SimpleRecord(b"%d" % (value + i), timestamp=int(time.time() * 1000)) for i in range(count)]
        partition_log.append_as_leader(MemoryRecords(bytearray(build_batch(records))), 0)
        value += count
        # flush.messages=1: the append above was fsynced before it returned.
        print(value - 1, flush=True)


if __name__ == "__main__":
    main()
