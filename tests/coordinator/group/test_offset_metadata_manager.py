"""OffsetMetadataManager: plain and transactional offsets, as replaying `__consumer_offsets` gives them."""

from __future__ import annotations

from franz.coordinator.group.group_coordinator_record_serde import OffsetAndMetadata
from franz.coordinator.group.offset_metadata_manager import OffsetMetadataManager
from franz.protocol.errors import Errors

PARTITION = 2  # the group's partition of __consumer_offsets
PRODUCER = 4000


def _offset(committed: int) -> OffsetAndMetadata:
    return OffsetAndMetadata(committed, -1, "", 1_000, None)


def _committed(manager: OffsetMetadataManager, group: str = "g") -> dict[tuple[str, int], int]:
    return {tp: value.committed_offset for tp, value in manager.group_offsets(group).items()}


def _fetch(manager: OffsetMetadataManager, require_stable: bool, group: str = "g") -> list[tuple[int, int, int]]:
    topics = manager.fetch(group, [{"name": "t", "partition_indexes": [0, 1]}], require_stable)
    return [(p["partition_index"], p["committed_offset"], p["error_code"]) for p in topics[0]["partitions"]]


def test_transactional_offsets_are_pending_until_a_commit_marker():
    manager = OffsetMetadataManager()
    manager.replay("g", "t", 0, _offset(3), record_offset=0)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=1)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 1, _offset(20), record_offset=2)
    assert _committed(manager) == {("t", 0): 3}
    assert manager.has_pending("g", "t", 0) and manager.has_open_transactions("g")
    assert manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=True) == ["g"]
    assert _committed(manager) == {("t", 0): 10, ("t", 1): 20}
    assert not manager.has_pending("g", "t", 0) and not manager.has_open_transactions("g")


def test_an_abort_marker_drops_the_pending_offsets_and_keeps_the_committed_ones():
    manager = OffsetMetadataManager()
    manager.replay("g", "t", 0, _offset(3), record_offset=0)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=1)
    manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=False)
    assert _committed(manager) == {("t", 0): 3}
    assert not manager.has_open_transactions("g")


def test_a_marker_resolves_only_its_own_partition_and_producer():
    manager = OffsetMetadataManager()
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=1)
    assert manager.replay_end_transaction_marker(PARTITION + 1, PRODUCER, commit=True) == []
    assert manager.replay_end_transaction_marker(PARTITION, PRODUCER + 1, commit=True) == []
    assert _committed(manager) == {} and manager.has_pending("g", "t", 0)


def test_a_newer_plain_commit_wins_over_an_older_transactional_one():
    manager = OffsetMetadataManager()
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=5)
    manager.replay("g", "t", 0, _offset(7), record_offset=6)  # after the txn's record, before its marker
    manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=True)
    assert _committed(manager) == {("t", 0): 7}


def test_a_tombstone_removes_committed_and_pending_offsets():
    manager = OffsetMetadataManager()
    manager.replay("g", "t", 0, _offset(3), record_offset=0)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=1)
    manager.replay("g", "t", 0, None, record_offset=2)
    assert not manager.has_pending("g", "t", 0)
    manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=True)
    assert _committed(manager) == {}


def test_require_stable_fetch_answers_unstable_offset_commit_where_a_transaction_is_open():
    manager = OffsetMetadataManager()
    manager.replay("g", "t", 0, _offset(3), record_offset=0)
    manager.replay("g", "t", 1, _offset(4), record_offset=1)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=2)
    assert _fetch(manager, require_stable=False) == [(0, 3, Errors.NONE), (1, 4, Errors.NONE)]
    assert _fetch(manager, require_stable=True) == [(0, -1, Errors.UNSTABLE_OFFSET_COMMIT), (1, 4, Errors.NONE)]
    every = manager.fetch("g", None, require_stable=True)
    assert [(p["partition_index"], p["error_code"]) for p in every[0]["partitions"]] \
        == [(0, Errors.UNSTABLE_OFFSET_COMMIT), (1, Errors.NONE)]
    manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=True)
    assert _fetch(manager, require_stable=True) == [(0, 10, Errors.NONE), (1, 4, Errors.NONE)]


def test_an_offset_with_a_pending_transactional_offset_does_not_expire():
    manager = OffsetMetadataManager()
    manager.replay("g", "t", 0, _offset(3), record_offset=0)
    manager.replay("g", "t", 1, _offset(4), record_offset=1)
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=2)
    expired = manager.expired_offsets("g", now_ms=10**9, retention_ms=1, group_is_empty=True,
                                      empty_since_ms=None, subscribed=None)
    assert expired == [("t", 1)]


def test_pending_partitions_lists_every_open_transactions_partitions_of_the_group():
    manager = OffsetMetadataManager()
    manager.replay_transactional(PARTITION, PRODUCER, "g", "t", 0, _offset(10), record_offset=1)
    manager.replay_transactional(PARTITION, PRODUCER + 1, "g", "t", 1, _offset(11), record_offset=2)
    manager.replay_transactional(PARTITION, PRODUCER + 1, "other", "t", 2, _offset(12), record_offset=3)
    assert manager.pending_partitions("g") == {("t", 0), ("t", 1)}
    manager.replay_end_transaction_marker(PARTITION, PRODUCER, commit=False)
    assert manager.pending_partitions("g") == {("t", 1)}


def test_a_live_groups_subscribed_topic_never_expires_even_with_an_explicit_retention():
    """OffsetMetadataManager.cleanupExpiredOffsets asks about the subscription first: an
    OffsetCommit v2-4 retention expires only offsets of topics the group no longer reads."""
    manager = OffsetMetadataManager()
    for topic in ("read", "dropped"):
        manager.replay("g", topic, 0, OffsetAndMetadata(5, -1, "", 1_000, 2_000), record_offset=0)
    expired = manager.expired_offsets("g", now_ms=10_000, retention_ms=10**9, group_is_empty=False,
                                      empty_since_ms=None, subscribed={"read"}.__contains__)
    assert expired == [("dropped", 0)]


def test_the_partitions_of_topics_cover_committed_and_pending_offsets():
    manager = OffsetMetadataManager()
    manager.replay("g", "gone", 0, _offset(3), record_offset=0)
    manager.replay("g", "kept", 0, _offset(3), record_offset=1)
    manager.replay_transactional(PARTITION, PRODUCER, "h", "gone", 1, _offset(10), record_offset=2)
    assert manager.partitions_of_topics({"gone"}) == {"g": {("gone", 0)}, "h": {("gone", 1)}}
