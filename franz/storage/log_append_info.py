"""LogAppendInfo: what an append did (Kafka's storage.internals.log.LogAppendInfo).

Its own module, as in Kafka, so that franz/storage/_unified_log_fast.c can build one
without importing UnifiedLog."""

from __future__ import annotations

import typing


class RecordValidationStats(typing.NamedTuple):
    """What validating an append cost beyond the request's own bytes
    (org.apache.kafka.common.record.RecordValidationStats): memory for decompressed and rebuilt
    records, and the records rebuilt (converted) and the time it took."""

    temporary_memory_bytes: int
    num_records_converted: int
    conversion_time_ns: int


class LogAppendInfo(typing.NamedTuple):
    """What an append did. A NamedTuple, built with tuple.__new__ on the produce path: one
    is made per append, at a fraction of a dataclass's cost."""

    first_offset: int
    last_offset: int
    last_leader_epoch: int
    max_timestamp: int
    shallow_offset_of_max_timestamp: int
    log_append_time_ms: int
    log_start_offset: int
    num_messages: int
    valid_bytes: int
    duplicate: bool = False
    record_validation_stats: RecordValidationStats | None = None  # None: nothing to count
