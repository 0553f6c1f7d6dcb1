"""Loading `__consumer_offsets` into the group coordinator's state (the replay side of Kafka's GroupCoordinatorShard).

`read_partitions` reads every record and transaction marker of the topic's
partitions (below their HW) in log order; `replay` hands each to the state it
belongs to: committed and transactional offsets and the markers that settle
them to the OffsetMetadataManager, classic groups (GroupMetadata records) to
the GroupCoordinator, consumer groups (record types 3-8, 16) to the
ConsumerGroupCoordinator, share groups (10-15) to the ShareGroupCoordinator and
streams groups (17, 19-23) to the StreamsGroupCoordinator. A group lives in one
partition, so log order per partition is the order of its changes; for a key
read more than once the last record wins, a tombstone deleting it.

Offsets of a group that has no group record left (a simple consumer, or a
group whose members are gone) get an Empty classic group, as Kafka keeps one.
A group id is one kind of group at a time: a conversion between the kinds
writes the old kind's tombstones and the new kind's records in one batch. Should
the log still hold live records of both kinds (a conversion whose write failed),
the kind written last is the group.
Records that do not decode are skipped with a warning (the loader logs where).
"""

from __future__ import annotations

import logging

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupCoordinator
from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC, load_partition_transactional
from franz.coordinator.group.group_coordinator import GroupCoordinator
from franz.coordinator.group.group_metadata import ClassicGroup
from franz.coordinator.group.offset_metadata_manager import OffsetMetadataManager
from franz.coordinator.group.share_group_coordinator import ShareGroupCoordinator
from franz.coordinator.group.streams.streams_group_coordinator import StreamsGroupCoordinator
from franz.records.builder import NO_PRODUCER_ID
from franz.storage.unified_log import UnifiedLog

logger = logging.getLogger(__name__)

# one record or marker read from __consumer_offsets:
# (partition, key or None for a marker, value or the marker's committed flag, offset, producer id)
LoadedEntry = tuple[int, bytes | None, bytes | bool | None, int, int]


def read_partitions(logs: list[tuple[int, UnifiedLog | None]]) -> list[LoadedEntry]:
    """Every record and COMMIT/ABORT marker of the partitions' logs, in log order per partition."""
    entries: list[LoadedEntry] = []
    for partition, log in logs:
        if log is None:
            continue
        load_partition_transactional(
            log, lambda key, value, offset, producer_id, p=partition: entries.append(
                (p, key, value, offset, producer_id)),
            lambda producer_id, commit, offset, p=partition: entries.append((p, None, commit, offset, producer_id)))
    return entries


def replay(entries: list[LoadedEntry], offsets: OffsetMetadataManager, classic: GroupCoordinator,
           consumer_groups: ConsumerGroupCoordinator | None, now_ms: int,
           share_groups: ShareGroupCoordinator | None = None,
           streams_groups: StreamsGroupCoordinator | None = None) -> int:
    """Rebuild the state from the entries; the number of groups with members' metadata loaded."""
    groups: dict[str, dict | None] = {}
    consumer_records: dict[str, dict[serde.ConsumerGroupRecordKey, bytes | None]] = {}
    share_records: dict[str, dict[serde.ConsumerGroupRecordKey, bytes | None]] = {}
    streams_records: dict[str, dict[serde.ConsumerGroupRecordKey, bytes | None]] = {}
    # (group id, kind) -> the offset of its last record: which kind is the group's now
    last_written: dict[tuple[str, str], tuple[int, int]] = {}
    for partition, key_bytes, value_bytes, offset, producer_id in entries:
        if key_bytes is None:
            assert isinstance(value_bytes, bool)
            offsets.replay_end_transaction_marker(partition, producer_id, value_bytes)
            continue
        assert not isinstance(value_bytes, bool)
        try:
            key = serde.read_key(key_bytes)
            if isinstance(key, serde.OffsetCommitKey):
                value = None if value_bytes is None else serde.read_offset_commit_value(value_bytes)
                if producer_id == NO_PRODUCER_ID:
                    offsets.replay(key.group, key.topic, key.partition, value, offset)
                else:
                    offsets.replay_transactional(partition, producer_id, key.group, key.topic, key.partition, value,
                                                 offset)
            elif isinstance(key, serde.GroupMetadataKey):
                groups[key.group] = None if value_bytes is None else serde.read_group_metadata_value(value_bytes)
                last_written[(key.group, "classic")] = (partition, offset)
            elif isinstance(key, serde.ConsumerGroupRecordKey) and key.record_type in serde.SHARE_GROUP_RECORD_TYPES:
                share_records.setdefault(key.group, {})[key] = value_bytes
            elif isinstance(key, serde.ConsumerGroupRecordKey) and key.record_type in serde.STREAMS_GROUP_RECORD_TYPES:
                streams_records.setdefault(key.group, {})[key] = value_bytes
            elif isinstance(key, serde.ConsumerGroupRecordKey):
                consumer_records.setdefault(key.group, {})[key] = value_bytes
                last_written[(key.group, "consumer")] = (partition, offset)
        except serde.RecordFormatError as exc:
            logger.warning("Skipping an undecodable record of %s: %s", OFFSETS_TOPIC, exc)
    for group_id in set(groups) & set(consumer_records):
        live_consumer_group = any(value is not None for value in consumer_records[group_id].values())
        if groups[group_id] is not None and live_consumer_group:
            if last_written[(group_id, "classic")] > last_written[(group_id, "consumer")]:
                del consumer_records[group_id]
            else:
                groups[group_id] = None
            logger.warning("Group %s has records of a classic and of a consumer group; loading the %s group, "
                           "written last.", group_id, "consumer" if groups[group_id] is None else "classic")
    for group_id, value in groups.items():
        if value is not None:
            classic.load_group(ClassicGroup.from_record(group_id, value, now_ms))
    loaded = 0 if consumer_groups is None else consumer_groups.load(consumer_records)
    if share_groups is not None:
        loaded += share_groups.load(share_records)
    if streams_groups is not None:
        loaded += streams_groups.load(streams_records)

    def is_modern_group(group_id: str) -> bool:
        return ((consumer_groups is not None and consumer_groups.group(group_id) is not None)
                or (streams_groups is not None and streams_groups.group(group_id) is not None))
    for group_id in [*offsets.offsets, *offsets.open_transactions_by_group]:
        if not is_modern_group(group_id):
            classic.get_or_create_group(group_id)  # a simple group: offsets, no members
    return loaded + sum(1 for value in groups.values() if value is not None)
