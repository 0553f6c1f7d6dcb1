"""The single-node controller against a real broker process: what a partition's
directory holds once the controller has made this node its leader."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewPartitions

from tests.support.raw_client import RawClient, batch, create_topic, produce

TIMEOUT_S = 30
LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO = "0\n1\n0 0\n"  # version, entry count, "epoch startOffset"


def test_a_new_partition_has_its_leader_epoch_checkpointed_before_the_first_produce(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "led", 2)
        checkpoints = [broker.data_dir / f"led-{p}" / "leader-epoch-checkpoint" for p in (0, 1)]
        assert [c.read_text() for c in checkpoints] == [LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO] * 2
        inode = checkpoints[0].stat().st_ino  # the file is replaced (tmp + rename) on every write
        assert produce(client, "led", batch(b"a", b"b"))["error_code"] == 0
        assert checkpoints[0].stat().st_ino == inode, "the first produce rewrote the epoch checkpoint"
        assert checkpoints[0].read_text() == LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO


def test_added_partitions_are_led_from_their_creation_and_a_restart_keeps_the_entries(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "grown", 1)
        assert produce(client, "grown", batch(b"x"))["error_code"] == 0
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_partitions([NewPartitions("grown", 3)])["grown"].result(TIMEOUT_S)
    del admin  # no client left to retry its connection while the broker restarts
    for partition in (1, 2):
        assert (broker.data_dir / f"grown-{partition}" / "leader-epoch-checkpoint").read_text() == \
            LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO
    broker.restart()
    assert (broker.data_dir / "grown-0" / "leader-epoch-checkpoint").read_text() == \
        LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO
