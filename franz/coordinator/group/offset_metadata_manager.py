"""Committed offsets in memory, as the log says they are (OffsetMetadataManager, OffsetExpirationCondition).

Owns the map group -> (topic, partition) -> OffsetAndMetadata. It changes only
by replaying records (after their append, or while loading): a value sets an
offset, a tombstone removes it. So the map is always what a reload of the
`__consumer_offsets` log would give.

Expiration (offsets.retention.minutes, checked every
offsets.retention.check.interval.ms), Kafka's rule: an offset with an explicit
expire timestamp (OffsetCommit v2-4 retention_time_ms) expires then; otherwise
only while its group is Empty (or, for a consumer group, when its topic is no
longer subscribed), counted from when the group became Empty, or from the
commit for a group that never had members (a simple group).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from franz.coordinator.group.group_coordinator_record_serde import NO_TOPIC_ID, OffsetAndMetadata
from franz.protocol.errors import Errors

TopicPartition = tuple[str, int]
# (partition of __consumer_offsets, producer id): one open transaction's offsets there
TxnKey = tuple[int, int]
OFFSETS_PER_GROUP_MAX: Final = 1_000_000
PENDING_PER_TRANSACTION_MAX: Final = 1_000_000


class OffsetMetadataManager:
    def __init__(self) -> None:
        self.offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        self.record_offsets: dict[tuple[str, str, int], int] = {}  # where each committed offset is in the log
        # transaction -> group -> partition -> (offset, its record offset)
        self.pending: dict[TxnKey, dict[str, dict[TopicPartition, tuple[OffsetAndMetadata, int]]]] = {}
        self.open_transactions_by_group: dict[str, set[TxnKey]] = {}

    def replay(self, group_id: str, topic: str, partition: int, value: OffsetAndMetadata | None,
               record_offset: int = -1) -> None:
        """A plain offset commit record (or tombstone) at record_offset of the log."""
        if value is None:
            offsets = self.offsets.get(group_id)
            if offsets is not None:
                offsets.pop((topic, partition), None)
                if not offsets:
                    del self.offsets[group_id]
            self.record_offsets.pop((group_id, topic, partition), None)
            for txn in self.open_transactions_by_group.get(group_id, ()):
                self.pending[txn].get(group_id, {}).pop((topic, partition), None)
            return
        offsets = self.offsets.setdefault(group_id, {})
        assert len(offsets) < OFFSETS_PER_GROUP_MAX or (topic, partition) in offsets, \
            f"group {group_id} holds {OFFSETS_PER_GROUP_MAX} offsets"
        offsets[(topic, partition)] = value
        self.record_offsets[(group_id, topic, partition)] = record_offset

    def replay_transactional(self, coordinator_partition: int, producer_id: int, group_id: str, topic: str,
                             partition: int, value: OffsetAndMetadata | None, record_offset: int) -> None:
        """An offset commit record of a transactional batch: pending until its marker."""
        assert producer_id >= 0
        if value is None:  # tombstones are never pending (Kafka replays them at once)
            self.replay(group_id, topic, partition, None, record_offset)
            return
        txn = (coordinator_partition, producer_id)
        group_pending = self.pending.setdefault(txn, {}).setdefault(group_id, {})
        assert len(group_pending) < PENDING_PER_TRANSACTION_MAX or (topic, partition) in group_pending, \
            f"transaction {txn} holds {PENDING_PER_TRANSACTION_MAX} offsets of group {group_id}"
        group_pending[(topic, partition)] = (value, record_offset)
        self.open_transactions_by_group.setdefault(group_id, set()).add(txn)

    def replay_end_transaction_marker(self, coordinator_partition: int, producer_id: int, commit: bool) -> list[str]:
        """The producer's COMMIT/ABORT marker in that partition; the groups it touched."""
        txn = (coordinator_partition, producer_id)
        pending = self.pending.pop(txn, None)
        if pending is None:
            return []
        for group_id in pending:
            open_txns = self.open_transactions_by_group.get(group_id)
            if open_txns is not None:
                open_txns.discard(txn)
                if not open_txns:
                    del self.open_transactions_by_group[group_id]
        if commit:
            for group_id, group_pending in pending.items():
                for (topic, partition), (value, record_offset) in group_pending.items():
                    existing = self.record_offsets.get((group_id, topic, partition))
                    if existing is None or record_offset > existing:
                        self.replay(group_id, topic, partition, value, record_offset)
        return list(pending)

    def has_pending(self, group_id: str, topic: str, partition: int) -> bool:
        return any((topic, partition) in self.pending[txn].get(group_id, {})
                   for txn in self.open_transactions_by_group.get(group_id, ()))

    def pending_partitions(self, group_id: str) -> set[TopicPartition]:
        """The partitions with a pending transactional offset of the group."""
        return {tp for txn in self.open_transactions_by_group.get(group_id, ())
                for tp in self.pending[txn].get(group_id, {})}

    def partitions_of_topics(self, topics: set[str]) -> dict[str, set[TopicPartition]]:
        """Each group's partitions of `topics` with a committed or pending offset."""
        found: dict[str, set[TopicPartition]] = {}
        for group_id, offsets in self.offsets.items():
            for topic, partition in offsets:
                if topic in topics:
                    found.setdefault(group_id, set()).add((topic, partition))
        for group_id in self.open_transactions_by_group:
            for topic, partition in self.pending_partitions(group_id):
                if topic in topics:
                    found.setdefault(group_id, set()).add((topic, partition))
        return found

    def has_open_transactions(self, group_id: str) -> bool:
        return group_id in self.open_transactions_by_group

    def has_offsets(self, group_id: str) -> bool:
        return bool(self.offsets.get(group_id))

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.offsets.get(group_id, {})

    def fetch(self, group_id: str, topics: list[dict] | None, require_stable: bool = False) -> list[dict]:
        """OffsetFetch answer topics: the asked partitions (-1 where none is committed), or every
        committed one; with require_stable, UNSTABLE_OFFSET_COMMIT where one is pending."""
        offsets = self.offsets.get(group_id, {})

        def answer(topic: str, index: int) -> dict:
            if require_stable and self.has_pending(group_id, topic, index):
                return _partition_answer(index, None, Errors.UNSTABLE_OFFSET_COMMIT)
            return _partition_answer(index, offsets.get((topic, index)))

        if topics is None:
            by_topic: dict[str, list[dict]] = {}
            for topic, partition in sorted(offsets):
                by_topic.setdefault(topic, []).append(answer(topic, partition))
            return [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()]
        # An offset committed for another topic of the same name (deleted and made again) is no
        # offset for the one asked by id (OffsetMetadataManager.isMismatchedTopicId).
        return [{"name": entry["name"], "partitions": [
            answer(entry["name"], index) if not _mismatched(offsets.get((entry["name"], index)), entry)
            else _partition_answer(index, None) for index in entry["partition_indexes"]]}
                for entry in topics]

    def expired_offsets(self, group_id: str, now_ms: int, retention_ms: int, group_is_empty: bool,
                        empty_since_ms: int | None, subscribed: Callable[[str], bool] | None) -> list[TopicPartition]:
        """The offsets of the group that expire at now_ms."""
        expired = []
        for (topic, partition), offset in self.offsets.get(group_id, {}).items():
            if self.has_pending(group_id, topic, partition):
                continue  # Kafka keeps it while a transaction may still replace it
            if not group_is_empty and (subscribed is None or subscribed(topic)):
                continue  # a topic the live group reads never expires, whatever its commit asked
            if offset.expire_timestamp_ms is not None:  # an OffsetCommit v2-4 retention
                if now_ms >= offset.expire_timestamp_ms:
                    expired.append((topic, partition))
                continue
            if group_is_empty:
                base_ms = empty_since_ms if empty_since_ms is not None else offset.commit_timestamp_ms
            else:
                base_ms = offset.commit_timestamp_ms
            if now_ms - base_ms >= retention_ms:
                expired.append((topic, partition))
        return expired


def _mismatched(offset: OffsetAndMetadata | None, asked: dict) -> bool:
    asked_id = bytes(asked.get("topic_id") or NO_TOPIC_ID)
    return (offset is not None and offset.topic_id != NO_TOPIC_ID and asked_id != NO_TOPIC_ID
            and offset.topic_id != asked_id)


def _partition_answer(index: int, offset: OffsetAndMetadata | None, error: Errors = Errors.NONE) -> dict:
    if offset is None:
        return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                "metadata": "", "error_code": error}
    return {"partition_index": index, "committed_offset": offset.committed_offset,
            "committed_leader_epoch": offset.leader_epoch, "metadata": offset.metadata, "error_code": 0}
