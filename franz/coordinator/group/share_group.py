"""A KIP-932 share group and its members (Kafka's ShareGroup and ShareGroupMember).

A share group has members, a group epoch, a target assignment computed by the
simple assignor, and the share-partition bookkeeping of
ShareGroupStatePartitionMetadata: which partitions of its subscribed topics have
their state initialized at the share coordinator (only those are assigned), which
are being initialized, and which topics' state is being deleted.

Members reconcile at once: there is no revocation step, since a share group's
partitions are not owned exclusively. A member at the target epoch is Stable.
The group is Empty without members and Stable with them; share groups never
expire.
"""

from __future__ import annotations

import dataclasses
from typing import Final

Assignment = dict[bytes, frozenset[int]]  # topic id -> partitions

# ModernGroup in 4.3 starts at epoch 1 with an initial target assignment at epoch 1, so a
# first member's join takes the group to epoch 2.
INITIAL_GROUP_EPOCH: Final = 1
LEAVE_GROUP_MEMBER_EPOCH: Final = -1
JOIN_GROUP_MEMBER_EPOCH: Final = 0
MEMBER_STATE_STABLE: Final = 0
MEMBER_ID_MAX_LENGTH: Final = 36


def member_id_valid(member_id: str | None) -> bool:
    """KafkaApis.isMemberIdValid: what every share API asks of the client's own member id."""
    return bool(member_id) and len(member_id) <= MEMBER_ID_MAX_LENGTH


@dataclasses.dataclass(frozen=True, slots=True)
class ShareGroupMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: int = MEMBER_STATE_STABLE
    assigned: Assignment = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(slots=True)
class InitializingPartitions:
    name: str
    partitions: frozenset[int]
    since_ms: int  # when the initialization was asked for: retried after the retry interval


class ShareGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_GROUP_EPOCH
        self.metadata_hash = 0
        self.assignment_epoch = INITIAL_GROUP_EPOCH
        self.assignment_timestamp_ms = 0
        self.members: dict[str, ShareGroupMember] = {}
        self.target_assignment: dict[str, Assignment] = {}
        # ShareGroupStatePartitionMetadata: topic id -> (name, partitions)
        self.initialized: dict[bytes, tuple[str, frozenset[int]]] = {}
        self.initializing: dict[bytes, InitializingPartitions] = {}
        self.deleting: dict[bytes, str] = {}
        self.persisted: dict[bytes, bytes] = {}  # the records the log holds for the group
        self.dead = False

    @property
    def state(self) -> str:
        return "Stable" if self.members else "Empty"

    def subscribed_topic_names(self) -> set[str]:
        return {name for member in self.members.values() for name in member.subscribed_topic_names}

    def initialized_partitions(self) -> Assignment:
        return {topic_id: partitions for topic_id, (_, partitions) in self.initialized.items()}

    def mark_initialized(self, topic_id: bytes, name: str, partitions: frozenset[int]) -> None:
        """The share coordinator holds these partitions' state now: they may be assigned."""
        known = self.initialized.get(topic_id, (name, frozenset()))[1]
        self.initialized[topic_id] = (name, known | partitions)
        pending = self.initializing.get(topic_id)
        if pending is not None:
            left = pending.partitions - partitions
            if left:
                pending.partitions = left
            else:
                del self.initializing[topic_id]

    def forget_initializing(self, topic_id: bytes, partitions: frozenset[int]) -> None:
        pending = self.initializing.get(topic_id)
        if pending is not None:
            pending.partitions -= partitions
            if not pending.partitions:
                del self.initializing[topic_id]
