"""franz/storage/_unified_log_fast.c against UnifiedLog.append_as_leader's Python steps.

The C call may only append what those steps append, or hand the rest back: the
validator's tuple when a producer's batch or a roll is Python's to handle, None when the
full validator must run. These tests replay seeded random produce traffic into two logs,
one with the module and one without, and compare every answer and every file."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from franz.records import CompressionType, MemoryRecords, SimpleRecord, build_batch
from franz.storage import unified_log
from franz.storage.log_append_info import LogAppendInfo
from franz.storage.log_config import LogConfig
from franz.storage.unified_log import UnifiedLog

native = unified_log.append_as_leader_common_case
NOW = 1_700_000_000_000
PRODUCER_ID = 42


def test_the_native_module_is_built():
    # `pip install` builds it (setup.py); without it append_as_leader runs its steps in Python.
    assert native is not None, "franz.storage._unified_log_fast is not built: run `pip install -e .`"


def _request(rng: random.Random, producer: dict) -> bytearray:
    """A produce request's records: mostly plain batches, some idempotent (in sequence, or
    a retry of the last one: a duplicate), compressed, or with a bad CRC."""
    records = [SimpleRecord(rng.randbytes(rng.choice((10, 100, 900))), timestamp=NOW + rng.randint(-500, 500))
               for _ in range(rng.randint(1, 12))]
    kind = rng.random()
    if kind < 0.2:
        if rng.random() < 0.2 and "last" in producer:
            return bytearray(producer["last"])
        batch = build_batch(records, producer_id=PRODUCER_ID, producer_epoch=0, base_sequence=producer["sequence"])
        producer["sequence"] += len(records)
        producer["last"] = batch
        return bytearray(batch)
    if kind < 0.3:
        return bytearray(build_batch(records, compression_type=CompressionType.LZ4))
    batch = bytearray(build_batch(records))
    if kind < 0.35:
        batch[-1] ^= 1  # the CRC no longer matches
    return batch


def _append(partition_log: UnifiedLog, request: bytearray, leader_epoch: int):
    try:
        info = partition_log.append_as_leader(MemoryRecords(request), leader_epoch)
    except Exception as error:  # noqa: BLE001 - the error itself is what both paths must agree on
        return type(error), str(error)
    stats = info.record_validation_stats
    if stats is not None:  # a rebuild's time is the clock's, not the path's
        info = info._replace(record_validation_stats=stats._replace(
            conversion_time_ns=int(stats.conversion_time_ns > 0)))
    return info


def _files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir()) if path.is_file()}


@pytest.mark.parametrize("props", [{}, {"segment.bytes": 20_000}, {"message.timestamp.type": "LogAppendTime"},
                                   {"compression.type": "lz4"}, {"index.interval.bytes": 100_000},
                                   {"flush.messages": 25}])
def test_every_answer_and_every_file_match_the_python_steps(tmp_path, props, monkeypatch):
    config = LogConfig.from_props({"message.timestamp.after.max.ms": 10**9, **props})
    clock = [NOW]
    by_c, by_python = (UnifiedLog.create(tmp_path / side / "t-0", config, time_ms=lambda: clock[0])
                       for side in ("c", "python"))
    answers = []

    def counting(*args):
        answers.append(native(*args))
        return answers[-1]

    rng = random.Random(str(props))
    producer = {"sequence": 0}
    leader_epoch = 3
    for _ in range(150):
        clock[0] += rng.randint(0, 50)
        request = _request(rng, producer)
        if rng.random() < 0.03:
            leader_epoch += 1  # a new leader epoch: the epoch cache's to record, in Python
        monkeypatch.setattr(unified_log, "append_as_leader_common_case", counting)
        done_by_c = _append(by_c, bytearray(request), leader_epoch)
        monkeypatch.setattr(unified_log, "append_as_leader_common_case", None)
        done_by_python = _append(by_python, bytearray(request), leader_epoch)
        assert done_by_c == done_by_python
        assert by_c.local_log.log_end_offset_metadata == by_python.local_log.log_end_offset_metadata
        assert by_c.recovery_point == by_python.recovery_point  # flush.messages
        assert by_c.producer_state_manager.map_end_offset == by_python.producer_state_manager.map_end_offset
        assert by_c.leader_epoch_cache.epoch_entries() == by_python.leader_epoch_cache.epoch_entries()
    assert leader_epoch > 3
    for partition_log in (by_c, by_python):
        partition_log.close()
    assert _files(tmp_path / "c" / "t-0") == _files(tmp_path / "python" / "t-0")
    kinds = {kind: sum(type(answer) is kind for answer in answers) for kind in (LogAppendInfo, tuple, type(None))}
    if props.get("message.timestamp.type") or props.get("compression.type"):
        assert kinds == {LogAppendInfo: 0, tuple: 0, type(None): len(answers)}  # Python's to rewrite
    else:
        # Plain batches appended in C; producers' batches, new epochs, first batches of
        # segments and rolls handed back stamped; compressed and corrupt ones to the validator.
        assert kinds[LogAppendInfo] > 50 and kinds[tuple] > 10 and kinds[type(None)] > 10
