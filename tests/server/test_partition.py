"""Partition's leader-side checks that need no log."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.partition import Partition


def test_the_current_leader_epoch_is_fenced_when_older_and_unknown_when_newer():
    partition = Partition("t", 0, log=None, node_id=1)
    partition.leader_epoch = 3
    assert partition.check_current_leader_epoch(-1) == Errors.NONE  # not named: unchecked
    assert partition.check_current_leader_epoch(3) == Errors.NONE
    assert partition.check_current_leader_epoch(2) == Errors.FENCED_LEADER_EPOCH
    assert partition.check_current_leader_epoch(4) == Errors.UNKNOWN_LEADER_EPOCH
