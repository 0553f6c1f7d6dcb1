"""glibc malloc settings for the broker process (the JVM's heap options, for Kafka).

A request is read into a buffer of its exact size (KafkaChannel), up to a
producer's whole 1 MiB batch per partition. Above its mmap threshold glibc
serves such a block with a fresh mmap and unmaps it on free, so every request
pays a page fault per 4 KiB page (the kernel zeroes each one) and an munmap:
measured here at ~0.7 ms per MiB, more than writing that MiB to the log. With
the mmap threshold fixed at 32 MiB (the ceiling of glibc's own adjustment on
64-bit) and a trim threshold that keeps freed heap up to TRIM_THRESHOLD_BYTES,
request buffers reuse heap pages already mapped. Fixing either value also turns
off glibc's adjustment, which otherwise moves with the last block freed.

Not glibc (musl, macOS): nothing is changed.

reserve_request_heap: the heap those buffers reuse is still unmapped when the broker
starts, so the first burst of large requests faults in every page its buffers take (and
on a VM whose host reclaims free memory, each fault is a trap to the host as well). A
broker fed 300,000 x 1 KiB records by two producers at full speed right after its start
took 13,828-16,032 minor faults (54-63 MB) in that first burst and 2 in the next.
Faulting REQUEST_HEAP_RESERVE_BYTES in at start (~50 ms here) and freeing it again
moves that cost out of the first requests, as the JVM's -Xms with -XX:+AlwaysPreTouch
does for a Kafka broker's heap. Three starts each way, alternated, that first burst
went from p99 170, 171 and 181 ms to 114, 126 and 123 ms, and from 0.32-0.38 s of
broker CPU to 0.26-0.32 s.

new_request_buffer: bytearray(size) zero-fills the buffer before the socket's bytes
overwrite all of it; for a producer's 1 MiB frame that memset was ~5% of the broker's
CPU at 100 B records. PyByteArray_FromStringAndSize(NULL, size) leaves the memory as
the allocator gives it, which is safe only because a frame is parsed once every byte of
it came from the socket (KafkaChannel dispatches a frame when it is full, drops it
otherwise).
"""

from __future__ import annotations

import ctypes
import logging
import mmap

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # mallopt parameters, glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024
# What producers at full speed keep in flight in the broker: the Java producer holds up to
# buffer.memory (32 MiB by default) unacknowledged, and two of them filled 54-63 MB of heap.
REQUEST_HEAP_RESERVE_BYTES = 64 * 1024 * 1024
# Reserved in blocks well below MMAP_THRESHOLD_BYTES: one block of the whole reserve would be
# mmapped, and unmapped again when freed.
RESERVE_BLOCK_BYTES = 1024 * 1024


try:  # CPython's C API through ctypes: the call holds the GIL, and ctypes takes over the new reference
    _bytearray_from_string_and_size = ctypes.pythonapi.PyByteArray_FromStringAndSize
    _bytearray_from_string_and_size.argtypes = (ctypes.c_void_p, ctypes.c_ssize_t)
    _bytearray_from_string_and_size.restype = ctypes.py_object
except AttributeError:  # not CPython
    _bytearray_from_string_and_size = None

# Below this a frame is cheaper to zero than to allocate through ctypes: the call takes ~0.7 us,
# about what zeroing 64 KiB does (bytearray(65536): 0.9 us; python -m timeit, warm).
UNINITIALIZED_FROM_BYTES = 64 * 1024


def new_request_buffer(size: int) -> bytearray:
    """A bytearray of `size` bytes for a frame the caller fills completely before reading it;
    its contents until then are unspecified (not zeroed) when it is large."""
    if size < UNINITIALIZED_FROM_BYTES or _bytearray_from_string_and_size is None:
        return bytearray(size)
    return _bytearray_from_string_and_size(None, size)


def keep_request_buffers_in_heap() -> bool:
    """Apply both settings; False when this libc has no mallopt or refused them."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD,
                                                                                        TRIM_THRESHOLD_BYTES))
    if not applied:
        log.info("malloc thresholds left at the C library's defaults (mallopt refused them)")
    return applied


def reserve_request_heap(total_bytes: int = REQUEST_HEAP_RESERVE_BYTES) -> None:
    """Fault in `total_bytes` of heap and free it, for the first requests' buffers to reuse.
    Only worth calling once keep_request_buffers_in_heap() succeeded: the trim threshold is
    what keeps the freed blocks (adjacent, so one free chunk) mapped."""
    blocks = [new_request_buffer(RESERVE_BLOCK_BYTES) for _ in range(total_bytes // RESERVE_BLOCK_BYTES)]
    one_byte_per_page = bytes(RESERVE_BLOCK_BYTES // mmap.PAGESIZE)
    for block in blocks:  # new_request_buffer leaves large blocks untouched: write each page once
        block[::mmap.PAGESIZE] = one_byte_per_page
