"""franz.server.allocator: request buffers reuse heap pages instead of a fresh mmap each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from franz.records import MemoryRecords, SimpleRecord
from franz.server.allocator import REQUEST_HEAP_RESERVE_BYTES, UNINITIALIZED_FROM_BYTES, new_request_buffer
from tests.support.raw_client import RawClient, create_topic, produce

# Buffers of growing size, as produce requests arrive: each one is larger than the
# last block freed, so glibc's own threshold adjustment never catches up with them.
GROWING_BUFFERS = """
import resource, sys
from franz.server.allocator import keep_request_buffers_in_heap
if sys.argv[1] == "tuned":
    assert keep_request_buffers_in_heap()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(32):
    buffer = bytearray(1048576 + i * 65536)
    del buffer
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", GROWING_BUFFERS, mode], capture_output=True, text=True,
                          timeout=60, check=True, cwd=Path(__file__).resolve().parents[2])
    return int(done.stdout)


def test_freed_request_buffers_are_reused_without_page_faults():
    default, tuned = _page_faults("default"), _page_faults("tuned")
    # Untuned, every buffer is a fresh mmap: a fault per 4 KiB page, ~16,000 in all.
    assert default > 32 * 256
    # Tuned, the heap grows once to the largest buffer (~770 pages) and is reused.
    assert tuned < default / 5


# Requests in flight at once, as pipelining producers leave them in the broker: every
# buffer is live while the next ones are read.
BUFFERS_IN_FLIGHT = """
import mmap, resource, sys
from franz.server.allocator import keep_request_buffers_in_heap, new_request_buffer, reserve_request_heap
assert keep_request_buffers_in_heap()
if sys.argv[1] == "reserved":
    reserve_request_heap()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
buffers = [new_request_buffer(1048576) for _ in range(int(sys.argv[2]))]
for buffer in buffers:
    buffer[:] = bytes(1048576)  # as the socket's bytes fill a frame
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults_in_flight(mode: str, buffers: int) -> int:
    done = subprocess.run([sys.executable, "-c", BUFFERS_IN_FLIGHT, mode, str(buffers)], capture_output=True,
                          text=True, timeout=60, check=True, cwd=Path(__file__).resolve().parents[2])
    return int(done.stdout)


def test_the_reserved_heap_holds_the_first_requests_in_flight_without_page_faults():
    buffers = REQUEST_HEAP_RESERVE_BYTES // (1 << 20) - 8  # within the reserve, beside what Python took since
    pages = buffers * (1 << 20) // 4096
    # Without the reserve the heap grows under the first requests: each page faults once.
    assert _faults_in_flight("unreserved", buffers) > pages * 0.9
    assert _faults_in_flight("reserved", buffers) < pages / 20


def _minor_faults(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7])  # minflt, the 10th field of proc_pid_stat(5)


def test_the_broker_receives_large_produce_requests_without_faulting_their_pages(broker_factory):
    broker = broker_factory({"message.max.bytes": str(8 * 1024 * 1024)})
    value = b"v" * 1000
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "big")
        requests = [bytes(MemoryRecords.with_records([SimpleRecord(value=value)] * (1000 + 50 * n)).buffer)
                    for n in range(24)]
        for records in requests[:4]:  # warm-up: the heap grows to hold a request
            assert produce(client, "big", records)["error_code"] == 0
        before = _minor_faults(broker.process.pid)
        for records in requests[4:]:
            assert produce(client, "big", records)["error_code"] == 0
        faults = _minor_faults(broker.process.pid) - before
    pages = sum(len(records) for records in requests[4:]) // 4096
    # Each request is over 1 MiB and larger than the one before; read into fresh
    # mmapped memory, every one of its pages would fault.
    assert faults < pages / 4, (faults, pages)


def test_a_fresh_broker_reads_its_first_large_request_into_heap_reserved_at_start(broker_factory):
    broker = broker_factory({"message.max.bytes": str(32 * 1024 * 1024)})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "first")
        assert produce(client, "first", bytes(MemoryRecords.with_records([SimpleRecord(value=b"v")]).buffer))[
            "error_code"] == 0
        records = bytes(MemoryRecords.with_records([SimpleRecord(value=b"v" * 1000)] * 24_000).buffer)
        before = _minor_faults(broker.process.pid)
        assert produce(client, "first", records)["error_code"] == 0
        faults = _minor_faults(broker.process.pid) - before
    pages = len(records) // 4096
    # A 23 MiB frame is below the mmap threshold: without the reserve, the heap would grow
    # by the frame's size and every one of its pages would fault.
    assert faults < pages / 4, (faults, pages)


def test_a_request_buffer_is_a_writable_bytearray_of_its_size_owned_by_its_caller():
    for size in (0, 1, UNINITIALIZED_FROM_BYTES - 1, UNINITIALIZED_FROM_BYTES, 1 << 20):
        buffer = new_request_buffer(size)
        assert type(buffer) is bytearray and len(buffer) == size
        buffer[:] = b"\x07" * size
        assert buffer.count(7) == size
        # The caller's reference is the only one (ctypes took over the C API's new
        # reference): a leaked one would keep every request's frame alive.
        assert sys.getrefcount(buffer) == 2
