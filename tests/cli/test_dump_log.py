"""`franz dump-log` on files written by franz's own log engine, run as a real command."""

import json
import re
import struct
import subprocess
import sys
import time

import pytest

from franz.records import ControlRecordType, MemoryRecords, SimpleRecord, build_batch, build_control_batch
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import AppendOrigin
from franz.storage.unified_log import UnifiedLog
from tests.support.log_test_utils import WITHOUT_VERIFICATION

TS = int(time.time() * 1000) - 60_000  # recent: an old first timestamp would roll the segment (segment.ms)


def dump(*args):
    result = subprocess.run([sys.executable, "-m", "franz", "dump-log", *map(str, args)],
                            capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr


@pytest.fixture
def partition_dir(tmp_path):
    config = LogConfig.from_props({"index.interval.bytes": 1, "message.timestamp.before.max.ms": 2**62,
                                   "message.timestamp.after.max.ms": 2**62})
    log = UnifiedLog.create(tmp_path / "t-0", config, producer_state_config=WITHOUT_VERIFICATION)
    log.append_as_leader(MemoryRecords(bytearray(build_batch(
        [SimpleRecord(b"hello", key=b"k1", timestamp=TS), SimpleRecord(b"world", timestamp=TS + 1,
                                                                        headers=(("h", b"v"),))]))), 0)
    now = int(time.time() * 1000)
    log.append_as_leader(MemoryRecords(bytearray(build_batch(
        [SimpleRecord(b"txn", timestamp=now)], producer_id=7, producer_epoch=0, base_sequence=0,
        is_transactional=True))), 0)
    log.append_as_leader(MemoryRecords(bytearray(build_control_batch(
        ControlRecordType.ABORT, producer_id=7, producer_epoch=0, coordinator_epoch=3, timestamp=now))), 0,
        origin=AppendOrigin.COORDINATOR)
    log.flush(log.log_end_offset)
    log.close()
    return tmp_path / "t-0"


def test_log_batches_are_printed_as_kafka_dump_log_prints_them(partition_dir):
    code, out, _ = dump(partition_dir / "00000000000000000000.log")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == f"Dumping {partition_dir / '00000000000000000000.log'}"
    assert lines[1] == "Log starting offset: 0"
    assert lines[2].startswith("baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 "
                               "producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false "
                               "isControl: false deleteHorizonMs: OptionalLong.empty position: 0 "
                               f"CreateTime: {TS + 1} size: ")
    assert lines[2].endswith("magic: 2 compresscodec: none crc: " + lines[2].split("crc: ")[1].split()[0]
                             + " isvalid: true")
    assert "isTransactional: true" in lines[3] and "isControl: true" in lines[4]


def test_print_data_log_prints_records_keys_payloads_and_markers(partition_dir):
    code, out, _ = dump("--print-data-log", partition_dir / "00000000000000000000.log")
    records = [line for line in out.splitlines() if line.startswith("|")]
    assert records[0] == (f"| offset: 0 CreateTime: {TS} keySize: 2 valueSize: 5 sequence: -1 headerKeys: [] "
                          "key: k1 payload: hello")
    assert records[1].endswith("headerKeys: [h] payload: world")
    assert records[3].endswith("endTxnMarker: ABORT coordinatorEpoch: 3")
    assert code == 0


def test_indexes_txnindex_snapshot_and_epoch_checkpoint(partition_dir):
    code, out, _ = dump(partition_dir / "00000000000000000000.index", partition_dir / "00000000000000000000.timeindex",
                        partition_dir / "00000000000000000000.txnindex", partition_dir / "leader-epoch-checkpoint",
                        *sorted(partition_dir.glob("*.snapshot")))
    assert code == 0, out
    assert "offset: 2 position: " in out
    assert re.search(r"^timestamp: \d+ offset: 2$", out, re.MULTILINE)
    assert "version: 0 producerId: 7 firstOffset: 2 lastOffset: 3 lastStableOffset: 4" in out
    assert "epoch: 0 startOffset: 0" in out
    assert "producerId: 7 producerEpoch: 0 coordinatorEpoch: 3" in out


def test_time_index_entries_are_checked_against_the_log_as_kafka_checks_them(partition_dir):
    time_index = partition_dir / "00000000000000000000.timeindex"
    code, out, err = dump(time_index)
    assert code == 0 and err == "", err
    timestamp, offset = struct.unpack(">qi", time_index.read_bytes()[:12])
    assert offset == 2  # the transactional batch's (the first batch is never indexed: Kafka's interval rule)
    time_index.write_bytes(struct.pack(">qi", timestamp - 5, 2))
    code, out, err = dump("--verify-index-only", time_index)
    assert code == 1 and out.splitlines() == [f"Dumping {time_index}"]
    assert (f"Found timestamp mismatch in :{time_index}\n"
            f"  Index timestamp: {timestamp - 5}, log timestamp: {timestamp}") in err
    time_index.write_bytes(struct.pack(">qi", timestamp, 0))  # offset 0 ends no batch: the first is 0-1
    code, out, err = dump(time_index)
    assert code == 1 and f"timestamp: {timestamp} offset: 0" in out
    not_found = f"The following indexed offsets are not found in :{time_index}\nIndexed offset: 0, found log offset: 1"
    assert not_found in err


def test_index_sanity_check_passes_and_catches_an_entry_past_the_log(partition_dir):
    index = partition_dir / "00000000000000000000.index"
    code, out, _ = dump("--index-sanity-check", index)
    assert code == 0 and f"{index} passed sanity check." in out
    data = bytearray(index.read_bytes())
    data[-4:] = (10**6).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    code, out, err = dump("--index-sanity-check", index)
    assert code == 1 and "does not point at a batch start" in err


def test_a_corrupt_batch_is_reported_with_its_position_and_the_tool_goes_on(partition_dir):
    log_file = partition_dir / "00000000000000000000.log"
    data = bytearray(log_file.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records: its CRC fails
    log_file.write_bytes(bytes(data) + b"\x00\x00\x00")
    code, out, err = dump(log_file, partition_dir / "leader-epoch-checkpoint")
    assert code == 1
    assert "isvalid: false" in out and "fails its CRC check" in err
    assert "Found 3 invalid bytes at the end of 00000000000000000000.log" in out
    assert "epoch: 0 startOffset: 0" in out


def test_json_output_is_one_object_per_file(partition_dir):
    code, out, _ = dump("--json", "--deep-iteration", partition_dir / "00000000000000000000.log",
                        partition_dir / "00000000000000000000.index")
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(docs) == 2
    assert [b["baseOffset"] for b in docs[0]["batches"]] == [0, 2, 3]
    assert docs[0]["batches"][0]["records"][1]["headerKeys"] == ["h"]
    assert docs[1]["entries"][0]["offset"] >= 0


def test_the_preallocated_index_of_an_open_active_segment_passes_the_sanity_check(tmp_path):
    config = LogConfig.from_props({})
    log = UnifiedLog.create(tmp_path / "t-0", config)  # active, empty, index pre-allocated with zeros
    code, out, err = dump("--index-sanity-check", tmp_path / "t-0" / "00000000000000000000.index")
    log.close()
    assert code == 0, err


def test_a_cleaned_log_shows_its_delete_horizon_and_the_cleaner_checkpoint_its_offsets(tmp_path):
    from franz.storage.cleaner import Cleaner  # noqa: PLC0415 - only this test cleans
    from franz.storage.cleaner_manager import LogCleanerManager, LogToClean  # noqa: PLC0415
    from franz.storage.offset_map import SkimpyOffsetMap  # noqa: PLC0415
    from franz.storage.throttler import Throttler  # noqa: PLC0415

    config = LogConfig.from_props({"cleanup.policy": "compact", "delete.retention.ms": 1000,
                                   "message.timestamp.before.max.ms": 2**62, "message.timestamp.after.max.ms": 2**62})
    log = UnifiedLog.create(tmp_path / "data" / "c-0", config)
    for value in (b"a", None):  # a value, then its tombstone
        log.append_as_leader(MemoryRecords(bytearray(build_batch([SimpleRecord(value, key=b"k", timestamp=TS)]))),
                             0)
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 16), 4096, 1 << 20, 0.9, Throttler(float("inf")), lambda: TS,
                      lambda tp: None)
    end, _ = cleaner.clean(LogToClean(("c", 0), log, 0, log.log_end_offset))
    LogCleanerManager([tmp_path / "data"], lambda: {("c", 0): log}).update_checkpoints(tmp_path / "data",
                                                                                        (("c", 0), end))
    log.close()
    code, out, _ = dump(tmp_path / "data" / "c-0" / "00000000000000000000.log",
                        tmp_path / "data" / "cleaner-offset-checkpoint")
    assert code == 0, out
    assert "baseOffset: 1 lastOffset: 1 count: 1" in out and f"deleteHorizonMs: OptionalLong[{TS + 1000}]" in out
    assert "topic: c partition: 0 offset: 2" in out


def test_files_come_as_kafkas_comma_separated_files_option_and_are_required(partition_dir):
    log, index = partition_dir / "00000000000000000000.log", partition_dir / "00000000000000000000.index"
    code, out, _ = dump("--files", f"{log},{index}")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("Dumping ")] == [f"Dumping {log}",
                                                                                   f"Dumping {index}"]
    code, _, err = dump()
    assert code == 1  # a usage error, as DumpLogSegments' CommandLineUtils exits
    assert 'Missing required argument "[files]"' in err


def test_a_reader_that_stops_reading_ends_nothing_badly(tmp_path):
    """`franz dump-log ... | head`: Kafka's System.out drops what nobody reads and the dump ends as
    usual; franz's too, with no "Broken pipe" error blamed on the file."""
    log_file = tmp_path / "00000000000000000000.log"
    log_file.write_bytes(build_batch([SimpleRecord(b"v" * 100, timestamp=TS) for _ in range(3000)]))
    process = subprocess.Popen([sys.executable, "-m", "franz", "dump-log", "--print-data-log", log_file],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.readline().startswith(b"Dumping ")
    process.stdout.close()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and err == b"", err
