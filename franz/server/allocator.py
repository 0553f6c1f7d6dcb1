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
"""

from __future__ import annotations

import ctypes
import logging

log = logging.getLogger(__name__)

M_TRIM_THRESHOLD = -1  # mallopt parameters, glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024  # DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024


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
