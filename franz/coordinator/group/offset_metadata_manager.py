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

from franz.coordinator.group.group_coordinator_record_serde import OffsetAndMetadata

TopicPartition = tuple[str, int]
OFFSETS_PER_GROUP_MAX: Final = 1_000_000


class OffsetMetadataManager:
    def __init__(self) -> None:
        self.offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}

    def replay(self, group_id: str, topic: str, partition: int, value: OffsetAndMetadata | None) -> None:
        if value is None:
            offsets = self.offsets.get(group_id)
            if offsets is not None:
                offsets.pop((topic, partition), None)
                if not offsets:
                    del self.offsets[group_id]
            return
        offsets = self.offsets.setdefault(group_id, {})
        assert len(offsets) < OFFSETS_PER_GROUP_MAX or (topic, partition) in offsets, \
            f"group {group_id} holds {OFFSETS_PER_GROUP_MAX} offsets"
        offsets[(topic, partition)] = value

    def has_offsets(self, group_id: str) -> bool:
        return bool(self.offsets.get(group_id))

    def group_offsets(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.offsets.get(group_id, {})

    def fetch(self, group_id: str, topics: list[dict] | None) -> list[dict]:
        """OffsetFetch answer topics: the asked partitions (-1 where none is committed), or every one."""
        offsets = self.offsets.get(group_id, {})
        if topics is None:
            by_topic: dict[str, list[dict]] = {}
            for (topic, partition), offset in sorted(offsets.items()):
                by_topic.setdefault(topic, []).append(_partition_answer(partition, offset))
            return [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()]
        answer = []
        for entry in topics:
            name = entry["name"]
            answer.append({"name": name, "partitions": [
                _partition_answer(index, offsets.get((name, index))) for index in entry["partition_indexes"]]})
        return answer

    def expired_offsets(self, group_id: str, now_ms: int, retention_ms: int, group_is_empty: bool,
                        empty_since_ms: int | None, subscribed: Callable[[str], bool] | None) -> list[TopicPartition]:
        """The offsets of the group that expire at now_ms."""
        expired = []
        for (topic, partition), offset in self.offsets.get(group_id, {}).items():
            if offset.expire_timestamp_ms is not None:
                if now_ms >= offset.expire_timestamp_ms:
                    expired.append((topic, partition))
                continue
            if group_is_empty:
                base_ms = empty_since_ms if empty_since_ms is not None else offset.commit_timestamp_ms
            elif subscribed is not None and not subscribed(topic):
                base_ms = offset.commit_timestamp_ms
            else:
                continue
            if now_ms - base_ms >= retention_ms:
                expired.append((topic, partition))
        return expired


def _partition_answer(index: int, offset: OffsetAndMetadata | None) -> dict:
    if offset is None:
        return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                "metadata": "", "error_code": 0}
    return {"partition_index": index, "committed_offset": offset.committed_offset,
            "committed_leader_epoch": offset.leader_epoch, "metadata": offset.metadata, "error_code": 0}
