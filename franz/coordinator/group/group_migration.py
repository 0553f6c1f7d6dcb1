"""Online migration between classic and consumer groups (KIP-848; ConsumerGroup.fromClassicGroup,
ClassicGroup.fromConsumerGroup and the policy of GroupCoordinatorConfig).

A group id keeps one group type at a time. Kafka 4.x moves a non-empty group
between the two protocols while its members keep consuming:

- upgrade: the first ConsumerGroupHeartbeat into a classic group whose members
  speak the consumer embedded protocol turns it into a consumer group. The
  group epoch is the classic generation, and every classic member becomes a
  Stable member at that epoch holding the partitions the classic leader gave
  it, so nothing moves until the assignor runs for the new member;
- downgrade: when the last member speaking the consumer protocol leaves (or is
  fenced) and only classic members remain, the consumer group turns back into a
  classic group at generation = group epoch, each member holding its target
  assignment, and a rebalance starts so the classic leader takes over.

Each conversion is written as one batch: the old group's tombstones, then the
new group's records.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

from franz.coordinator.group import consumer_protocol
from franz.coordinator.group.consumer_group import (
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
)
from franz.coordinator.group.consumer_protocol import ConsumerProtocolError
from franz.coordinator.group.group_metadata import ClassicGroup, ClassicGroupMember, GroupError, GroupState
from franz.protocol.errors import Errors


class ConsumerGroupMigrationPolicy(enum.Enum):
    """group.consumer.migration.policy: which conversions of a non-empty group are allowed."""
    DISABLED = "disabled"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    BIDIRECTIONAL = "bidirectional"

    @classmethod
    def parse(cls, name: str) -> ConsumerGroupMigrationPolicy:
        return cls(name.lower())  # KafkaConfig validated it, case-insensitively

    @property
    def upgrade_enabled(self) -> bool:
        return self in (ConsumerGroupMigrationPolicy.UPGRADE, ConsumerGroupMigrationPolicy.BIDIRECTIONAL)

    @property
    def downgrade_enabled(self) -> bool:
        return self in (ConsumerGroupMigrationPolicy.DOWNGRADE, ConsumerGroupMigrationPolicy.BIDIRECTIONAL)


def consumer_group_from_classic(classic: ClassicGroup, topics: Mapping[str, tuple[bytes, int]]) -> ConsumerGroup:
    """The consumer group a classic group becomes (ConsumerGroup.fromClassicGroup). Partitions of
    topics the cluster no longer has are dropped. Raises GroupError(GROUP_ID_NOT_FOUND) when a
    member's subscription or assignment does not parse, or carries user data of a custom
    assignor, which the consumer protocol would lose."""
    group_id = classic.group_id
    generation = classic.generation_id
    group = ConsumerGroup(group_id)
    group.group_epoch = group.assignment_epoch = generation
    group.epoch_records_required = True
    members: list[ConsumerGroupMember] = []
    for classic_member in classic.members.values():
        try:
            assigned = _assigned_partitions(classic_member.assignment, topics)
            # A group not through its first rebalance has selected no protocol yet: a consumer's
            # subscription is the same in every protocol it offers.
            metadata = (classic_member.metadata(classic.protocol_name) if classic.protocol_name
                        else classic_member.supported_protocols[0][1])
            subscription = consumer_protocol.deserialize_subscription(metadata)
        except ConsumerProtocolError as exc:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group "
                             f"because the embedded consumer protocol is malformed: {exc}.") from None
        except _CustomAssignorData:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer group "
                             "because an unsupported custom assignor is in use. Please refer to the documentation "
                             "or switch to a default assignor before re-attempting the upgrade.") from None
        members.append(ConsumerGroupMember(
            classic_member.member_id, classic_member.group_instance_id, subscription.rack_id,
            classic_member.rebalance_timeout_ms, classic_member.client_id, classic_member.client_host,
            tuple(sorted(subscription.topics)), None, None, generation, generation, MemberState.STABLE, assigned,
            {}, {(topic_id, p): generation for topic_id, ps in assigned.items() for p in ps},
            ClassicMemberMetadata(classic_member.session_timeout_ms, tuple(
                (name, bytes(data)) for name, data in classic_member.supported_protocols))))
    held: set[tuple[bytes, int]] = set()
    for member in members:
        partitions = {(topic_id, p) for topic_id, ps in member.assigned.items() for p in ps}
        if partitions & held:  # a custom assignor gave a partition twice; the consumer protocol cannot
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer "
                             "group because its assignment gives a partition to more than one member.")
        held |= partitions
        group.update_member(member)
        group.target_assignment[member.member_id] = member.assigned
    group.metadata_hash = group.metadata_hash_of(topics)
    return group


class _CustomAssignorData(Exception):
    pass


def _assigned_partitions(assignment: bytes, topics: Mapping[str, tuple[bytes, int]]) -> dict[bytes, frozenset[int]]:
    if not assignment:  # joined, never synced
        return {}
    parsed = consumer_protocol.deserialize_assignment(assignment)
    if parsed.user_data:
        raise _CustomAssignorData()
    assigned: dict[bytes, set[int]] = {}
    for topic, partitions in parsed.partitions:
        if topic in topics and partitions:
            assigned.setdefault(topics[topic][0], set()).update(partitions)
    return {topic_id: frozenset(ps) for topic_id, ps in assigned.items()}


def classic_group_from_consumer(group: ConsumerGroup, leaving: set[str], names_by_id: Callable[[bytes], str | None],
                                now_ms: int) -> ClassicGroup:
    """The classic group a consumer group of classic members becomes once `leaving` are gone
    (ClassicGroup.fromConsumerGroup): Stable at generation = the group epoch, the first member
    its leader, each member holding its target assignment, written in the version of its
    subscription. Raises GroupError(GROUP_ID_NOT_FOUND) when a subscription does not parse."""
    classic = ClassicGroup(group.group_id, now_ms, GroupState.STABLE)
    classic.generation_id = group.group_epoch
    classic.protocol_type = consumer_protocol.PROTOCOL_TYPE
    for member in group.members.values():
        if member.member_id in leaving:
            continue
        assert member.classic is not None, f"{member.member_id} of {group.group_id} is not a classic member"
        classic.add(ClassicGroupMember(
            member.member_id, member.instance_id, member.client_id, member.client_host, member.rebalance_timeout_ms,
            member.classic.session_timeout_ms, consumer_protocol.PROTOCOL_TYPE,
            list(member.classic.supported_protocols)))
    classic.protocol_name = classic.select_protocol()
    for classic_member in classic.members.values():
        target = group.target_assignment.get(classic_member.member_id, {})
        partitions = {name: ps for topic_id, ps in target.items() if (name := names_by_id(topic_id)) is not None}
        try:
            version = consumer_protocol.deserialize_version(classic_member.metadata(classic.protocol_name))
            classic_member.assignment = consumer_protocol.serialize_assignment(partitions, version)
        except ConsumerProtocolError as exc:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Cannot downgrade the classic group {group.group_id}: "
                             f"{exc}.") from None
    return classic
