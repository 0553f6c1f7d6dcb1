"""filter_to against Kafka's own MemoryRecords.filterTo: the same input and decisions give the same bytes."""

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from franz.records import (
    CompressionType,
    ControlRecordType,
    MemoryRecords,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_control_batch,
)
from franz.records.record_filter import BatchRetention, BatchRetentionResult, RecordFilter, filter_to

NOW = 1_700_000_000_000
ORACLE = Path(__file__).parent / "java" / "RecordFilterOracle.java"


class ByKeyFilter(RecordFilter):
    """The decisions the Java oracle takes from its arguments."""

    def __init__(self, current_time, delete_retention_ms, drop_keys=(), delete_batches=(), retain_empty=(),
                 empty_txn_markers=()):
        super().__init__(current_time, delete_retention_ms)
        self.drop_keys, self.delete_batches = set(drop_keys), set(delete_batches)
        self.retain_empty, self.empty_txn_markers = set(retain_empty), set(empty_txn_markers)

    def check_batch_retention(self, batch):
        last = batch.last_offset
        retention = (BatchRetention.DELETE if last in self.delete_batches
                     else BatchRetention.RETAIN_EMPTY if last in self.retain_empty else BatchRetention.DELETE_EMPTY)
        return BatchRetentionResult(retention, last in self.empty_txn_markers)

    def should_retain_record(self, batch, record):
        key = "null" if record.key is None else record.key.decode()
        return key not in self.drop_keys


def sample_log(compression=CompressionType.NONE):
    """Batches at offsets 0-2, 3-5 (idempotent), 6 (a tombstone), 7-8 (transactional), 9 (its commit marker),
    10-11 (LOG_APPEND_TIME)."""
    parts = [
        build_batch([SimpleRecord(b"a%d" % i, key=b"k%d" % i, timestamp=NOW + i, headers=(("h", b"%d" % i),))
                     for i in range(3)], base_offset=0, compression_type=compression, partition_leader_epoch=3),
        build_batch([SimpleRecord(b"b%d" % i, key=b"k%d" % i, timestamp=NOW + 10 - i) for i in range(3)],
                    base_offset=3, compression_type=compression, producer_id=7, producer_epoch=1, base_sequence=4),
        build_batch([SimpleRecord(None, key=b"k1", timestamp=NOW + 20)], base_offset=6, compression_type=compression),
        build_batch([SimpleRecord(b"t%d" % i, key=b"t%d" % i, timestamp=NOW + 30) for i in range(2)], base_offset=7,
                    compression_type=compression, producer_id=9, producer_epoch=0, base_sequence=0,
                    is_transactional=True),
        build_control_batch(ControlRecordType.COMMIT, producer_id=9, producer_epoch=0, base_offset=9,
                            timestamp=NOW + 40),
        build_batch([SimpleRecord(b"l%d" % i, key=b"l%d" % i, timestamp=NOW) for i in range(2)], base_offset=10,
                    compression_type=compression, timestamp_type=TimestampType.LOG_APPEND_TIME,
                    log_append_time=NOW + 50),
    ]
    return b"".join(parts)


CASES = {
    "keep everything": {},
    "drop some keys": {"drop_keys": ["k0", "k2", "t1"]},
    "drop whole batches, keep an empty one": {"drop_keys": ["k0", "k1", "k2"], "retain_empty": [5]},
    "delete batches unseen": {"delete_batches": [2, 9]},
    "a tombstone gains a delete horizon": {"drop_keys": ["k0"]},
    "an empty transaction's marker gains one": {"drop_keys": ["t0", "t1"], "empty_txn_markers": [9]},
    "log append time rebuilt": {"drop_keys": ["l0"]},
}


def run(data, **decisions):
    return filter_to(MemoryRecords(data).batches(), ByKeyFilter(NOW + 100, 1000, **decisions), 2**31 - 1)


def test_what_each_decision_keeps():
    data = sample_log()
    kept = run(data, drop_keys=["k0", "k2"], retain_empty=[8], delete_batches=[11])
    batches = list(MemoryRecords(kept.output).batches())
    assert [(b.base_offset, b.last_offset, b.record_count) for b in batches] == [
        (0, 2, 1), (3, 5, 1), (6, 6, 1), (7, 8, 2), (9, 9, 1)]
    assert all(b.is_valid() for b in batches)
    assert [r.offset for b in batches for r in b.records()] == [1, 4, 6, 7, 8, 9]
    assert batches[1].producer_id == 7 and batches[1].base_sequence == 4 and batches[1].last_sequence == 6
    assert batches[2].delete_horizon_ms == NOW + 1100  # the tombstone's batch
    assert batches[0].delete_horizon_ms is None and batches[0].partition_leader_epoch == 3
    assert kept.messages_read == 10 and kept.messages_retained == 6
    assert kept.bytes_read == len(data)
    assert kept.max_offset == 9


def test_an_emptied_batch_kept_empty_is_a_bare_header_with_its_offsets_and_producer():
    kept = run(sample_log(), drop_keys=["k0", "k1", "k2"], retain_empty=[5])
    empty = next(b for b in MemoryRecords(kept.output).batches() if b.base_offset == 3)
    assert (empty.size_in_bytes, empty.record_count, empty.last_offset) == (61, 0, 5)
    assert (empty.producer_id, empty.producer_epoch, empty.base_sequence) == (7, 1, 4)
    assert empty.base_timestamp == -1 and empty.max_timestamp == NOW + 10 and empty.is_valid()


def random_log(rng: random.Random, compression: CompressionType) -> tuple[bytes, dict]:
    """A log of random batches (plain, idempotent, transactional, markers, LOG_APPEND_TIME; null keys
    and values, headers, gaps between batches) and random decisions about it."""
    parts, offset, lasts, markers = [], rng.randrange(0, 1000), [], []
    for _ in range(rng.randrange(1, 12)):
        kind = rng.choice(("plain", "idempotent", "transactional", "marker", "append-time"))
        if kind == "marker":
            parts.append(build_control_batch(rng.choice((ControlRecordType.COMMIT, ControlRecordType.ABORT)),
                                             producer_id=rng.randrange(1, 5), producer_epoch=0, base_offset=offset,
                                             timestamp=NOW + rng.randrange(100)))
            lasts.append(offset)
            markers.append(offset)
            offset += 1 + rng.randrange(3)
            continue
        records = [SimpleRecord(None if rng.random() < 0.2 else b"v" * rng.randrange(300),
                                key=None if rng.random() < 0.1 else b"k%d" % rng.randrange(8),
                                timestamp=NOW + rng.randrange(-50, 50),
                                headers=(("h", b"x" * rng.randrange(3)),) if rng.random() < 0.3 else ())
                   for _ in range(rng.randrange(1, 40))]
        producer = {} if kind in ("plain", "append-time") else {
            "producer_id": rng.randrange(1, 5), "producer_epoch": 0, "base_sequence": rng.randrange(100),
            "is_transactional": kind == "transactional"}
        if kind == "append-time":
            producer = {"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": NOW + 77}
        parts.append(build_batch(records, base_offset=offset, compression_type=compression, **producer))
        offset += len(records)
        lasts.append(offset - 1)
        offset += rng.randrange(3)
    keys = ["k%d" % i for i in range(8)] + ["null"]
    decisions = {"drop_keys": rng.sample(keys, rng.randrange(len(keys) + 1)),
                 "delete_batches": [last for last in lasts if rng.random() < 0.15],
                 "retain_empty": [last for last in lasts if rng.random() < 0.3],
                 "empty_txn_markers": [last for last in markers if rng.random() < 0.5]}
    return b"".join(parts), decisions


@pytest.mark.interop
@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK")
def test_the_same_bytes_as_kafkas_filter_to(tmp_path):
    """Every codec on the sample log with each named decision, and 150 random logs and decisions, through
    one JVM running kafka-clients 4.3.0's filterTo."""
    from tests.support.java_client import compile_driver  # noqa: PLC0415 - only for this test

    rng = random.Random(20261126)
    cases = [(f"{name} ({codec.name})", codec, sample_log(codec), decisions)
             for codec in CompressionType for name, decisions in CASES.items()]
    cases += [(f"random {i}", codec, *random_log(rng, codec))
              for i, codec in enumerate(rng.choice(list(CompressionType)) if i % 3 == 0 else CompressionType.NONE
                                        for i in range(150))]
    lines = []
    for index, (_, _, data, decisions) in enumerate(cases):
        (tmp_path / f"{index}.in").write_bytes(data)
        lines.append(" ".join([str(tmp_path / f"{index}.in"), str(tmp_path / f"{index}.out"), str(NOW + 100), "1000"]
                              + [",".join(str(v) for v in decisions.get(k, ())) or "-" for k in
                                 ("drop_keys", "delete_batches", "retain_empty", "empty_txn_markers")]))
    (tmp_path / "cases").write_text("\n".join(lines) + "\n")
    done = subprocess.run(compile_driver(ORACLE) + [str(tmp_path / "cases")], capture_output=True, text=True,
                          timeout=600, check=True)
    results = done.stdout.strip().splitlines()
    assert len(results) == len(cases)
    for index, ((name, codec, data, decisions), line) in enumerate(zip(cases, results)):
        ours = run(data, **decisions)
        counters = line.split()
        expected = [str(v) for v in (ours.messages_read, ours.bytes_read, ours.messages_retained, ours.bytes_retained,
                                     ours.max_offset, ours.max_timestamp, ours.shallow_offset_of_max_timestamp)]
        if codec != CompressionType.NONE:
            counters[3] = expected[3] = "-"  # bytes retained: a rebuilt batch's codec bytes differ by library
        assert counters == expected, name
        theirs = (tmp_path / f"{index}.out").read_bytes()
        if codec == CompressionType.NONE:
            assert bytes(ours.output) == theirs, name
        else:
            # Codec libraries differ in their bytes: compare the headers but the length and CRC, and the records.
            ours_batches = list(MemoryRecords(bytes(ours.output)).batches())
            their_batches = list(MemoryRecords(theirs).batches())
            assert len(ours_batches) == len(their_batches), name
            for mine, kafka in zip(ours_batches, their_batches):
                assert mine.is_valid() and kafka.is_valid()
                assert mine.header()._replace(batch_length=0, crc=0) == kafka.header()._replace(
                    batch_length=0, crc=0), name
                assert list(mine.records()) == list(kafka.records()), name
