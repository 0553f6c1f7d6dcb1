"""A consumer group of the KIP-848 protocol and its members (ConsumerGroup, ConsumerGroupMember, MemberState).

Epochs (Kafka's modern group model):
- a new group is at group epoch 1 with an empty target assignment at epoch 1
  (ModernGroup and TargetAssignmentMetadata.INITIAL, 4.3): epoch 0 is a joining
  member's, so a member can reconcile to epoch 1 before the first target, at 2;
- the group epoch moves up whenever what the assignor sees changes (a member
  joins, leaves or changes its subscription; a subscribed topic appears or
  grows);
- the assignment epoch is the group epoch the target assignment was computed
  for (`assignment_epoch <= group_epoch`; below it the group is Assigning);
- a member's epoch is the assignment epoch it has reconciled to; it moves
  only through CurrentAssignmentBuilder (franz/coordinator/group/
  current_assignment_builder.py);
- a partition's assignment epoch is the member epoch at which the member was
  given it (KIP-1251, 4.3): a commit from an older member epoch is still the
  member's for the partitions it held since then.

Ownership invariant: `partition_epochs[(topic id, partition)]` is the epoch of
the one member that holds the partition, as assigned or pending revocation;
a partition is handed to a member only when no other member holds it, so no
two members ever consume one partition at the same time.

Regex subscriptions are resolved for the whole group, not per member (Kafka's
resolvedRegularExpressions): `resolved_regexes` holds, for each regex some member
subscribes to, the topics it matched when last resolved, kept only while a member
still subscribes to it. A member's regex topics are those of its regex's entry;
a regex not yet resolved selects nothing.

Group states (ConsumerGroupState): Empty (no members), Assigning (group epoch
ahead of the target assignment), Reconciling (some member not yet at the
target), Stable.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Mapping
from typing import Final

from franz.coordinator.group import consumer_protocol
from franz.coordinator.group.metadata_hash import metadata_hash
from franz.protocol.errors import Errors

# topic id (16 bytes) -> partitions
Assignment = Mapping[bytes, frozenset[int]]

INITIAL_GROUP_EPOCH: Final = 1  # the group epoch and the target assignment epoch of a new group
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2
NO_PARTITION_EPOCH = -1


class MemberState(enum.Enum):
    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    UNRELEASED_PARTITIONS = "unreleased_partitions"


class ConsumerGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclasses.dataclass(frozen=True)
class ClassicMemberMetadata:
    """What a member that speaks the classic protocol (JoinGroup/SyncGroup/Heartbeat) inside a
    consumer group joined with (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata)."""
    session_timeout_ms: int
    # (protocol name, ConsumerProtocolSubscription bytes), in the member's order of preference
    supported_protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        """The protocol the member is answered in: its first."""
        return self.supported_protocols[0][0]


@dataclasses.dataclass(frozen=True)
class ConsumerGroupMember:
    """One member; immutable, so an update is a new value the group swaps in."""
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = dataclasses.field(default_factory=dict)
    pending_revocation: Assignment = dataclasses.field(default_factory=dict)
    # (topic id, partition) -> the epoch it was assigned at, for every partition assigned or
    # pending revocation (ConsumerGroupMember's assignedPartitions/partitionsPendingRevocation epochs)
    assignment_epochs: Mapping[tuple[bytes, int], int] = dataclasses.field(default_factory=dict)
    # set while the member speaks the classic protocol (online migration), None for a consumer member
    classic: ClassicMemberMetadata | None = None

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic is not None

    def assignment_epoch(self, topic_id: bytes, partition: int) -> int | None:
        """The epoch the member was given the partition at; None when it holds it not."""
        held = partition in self.assigned.get(topic_id, ()) or partition in self.pending_revocation.get(topic_id, ())
        return self.assignment_epochs.get((topic_id, partition), max(self.member_epoch, 0)) if held else None

    def is_reconciled_to(self, assignment_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == assignment_epoch

    def with_epoch(self, epoch: int, **changes) -> ConsumerGroupMember:
        """The member at a new epoch, remembering the one it leaves (for a lost answer)."""
        return dataclasses.replace(self, previous_member_epoch=self.member_epoch, member_epoch=epoch, **changes)


@dataclasses.dataclass(frozen=True)
class ResolvedRegularExpression:
    """The topics a regex matched (those its resolver's principal may describe), as of
    `version` of the cluster's topics, resolved at `timestamp_ms`."""
    topics: frozenset[str]
    version: int
    timestamp_ms: int


NOT_RESOLVED: Final = ResolvedRegularExpression(frozenset(), 0, 0)


def regex_of(member: ConsumerGroupMember) -> str | None:
    """The member's regex, None for none or an empty one (subscribedTopicRegexOrNull)."""
    return member.subscribed_topic_regex or None


def owned_partitions(assignment: Assignment) -> set[tuple[bytes, int]]:
    return {(topic_id, partition) for topic_id, partitions in assignment.items() for partition in partitions}


class ConsumerGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = INITIAL_GROUP_EPOCH
        self.assignment_epoch = INITIAL_GROUP_EPOCH
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target_assignment: dict[str, Assignment] = {}  # member id -> its target
        self.partition_epochs: dict[tuple[bytes, int], int] = {}
        # the hash of every subscribed topic that exists (metadata_hash.py), as of the group epoch
        self.metadata_hash = 0
        self.resolved_regexes: dict[str, ResolvedRegularExpression] = {}
        self.assignment_timestamp_ms = 0  # when the target was computed (KIP-1263); 0: unknown
        # a group converted from a classic one writes its epoch records even at the initial epochs
        # (createConsumerGroupRecords); other groups write them once an epoch moves
        self.epoch_records_required = False
        # read a 4.0 subscription metadata record: its next write tombstones it, as 4.1+ does
        self.has_subscription_metadata_record = False
        self.dead = False
        # the group's records as `__consumer_offsets` holds them (key -> value): what a write
        # must change (franz/coordinator/group/consumer_group_records.py)
        self.persisted: dict[bytes, bytes] = {}
        # (kind, member id) -> (the member or target object, its encoded records): see records_of
        self.encoded_records: dict[tuple[str, str], tuple[object, dict[bytes, bytes]]] = {}
        # The classic group's records of the same id that go with the group's next write, in one
        # batch: its tombstone before the group's records (an upgrade), its GroupMetadata after
        # the group's tombstones (a downgrade).
        self.classic_records_before: list[tuple[bytes, bytes | None]] = []
        self.classic_records_after: list[tuple[bytes, bytes | None]] = []

    @property
    def state(self) -> ConsumerGroupState:
        if self.dead:
            return ConsumerGroupState.DEAD
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch > self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        # a copy: a metrics scrape reads this on its own thread while the loop changes members
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in list(self.members.values())):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               epoch_aware_version: bool, transactional: bool,
                               partitions: Iterable[tuple[bytes, int]] = ()) -> Errors:
        """ConsumerGroup.validateOffsetCommit: with no member epoch only while the group is empty
        (an admin or a consumer outside group management), or from a transaction naming no
        member at all (TxnOffsetCommit's member fields are optional); a member commits
        with OffsetCommit v9+ (whose field is the member epoch) at its own epoch, or at an older
        one for partitions it was given at or before that epoch and still holds (KIP-1251: a
        commit sent before the member's last epoch bump). One partition failing fails them all."""
        if member_epoch < 0 and not self.members:
            return Errors.NONE
        if transactional and member_epoch == -1 and member_id == "" and instance_id is None:
            return Errors.NONE
        member = self.members.get(member_id)
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if not epoch_aware_version and not member.uses_classic_protocol:
            return Errors.UNSUPPORTED_VERSION
        if member_epoch == member.member_epoch:
            return Errors.NONE
        # A classic member's field is its generation: it hears ILLEGAL_GENERATION, as from a classic group.
        stale = Errors.ILLEGAL_GENERATION if member.uses_classic_protocol else Errors.STALE_MEMBER_EPOCH
        if member_epoch > member.member_epoch:
            return stale
        for topic_id, partition in partitions:
            assigned_at = member.assignment_epoch(topic_id, partition)
            if assigned_at is None or member_epoch < assigned_at:
                return stale
        return Errors.NONE

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> Errors:
        """ConsumerGroup.validateOffsetFetch (OffsetFetch v9+): a member fetches at its own epoch;
        a fetch naming no member (admin) is taken."""
        if member_id is None and member_epoch < 0:
            return Errors.NONE
        return self._check_epoch(member_id or "", member_epoch)

    def _check_epoch(self, member_id: str, member_epoch: int) -> Errors:
        member = self.members.get(member_id)
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if member_epoch == member.member_epoch:
            return Errors.NONE
        return Errors.ILLEGAL_GENERATION if member.uses_classic_protocol else Errors.STALE_MEMBER_EPOCH

    # -- members of both protocols (online migration) ------------------------------------

    def classic_members(self) -> list[ConsumerGroupMember]:
        return [m for m in self.members.values() if m.uses_classic_protocol]

    def supports_classic_protocols(self, protocol_type: str | None, names: set[str]) -> bool:
        """ConsumerGroup.supportsClassicProtocols: a classic member may join when it speaks the
        consumer protocol type and one of its protocols is supported by every classic member."""
        if protocol_type != consumer_protocol.PROTOCOL_TYPE:
            return False
        if not self.members:
            return bool(names)
        classic = self.classic_members()
        return any(all(name in dict(m.classic.supported_protocols) for m in classic) for name in names)

    def all_members_use_classic_protocol_except(self, leaving: set[str]) -> bool:
        """Every member but the leaving ones speaks the classic protocol (allMembersUseClassicProtocolExcept)."""
        return all(m.uses_classic_protocol for mid, m in self.members.items() if mid not in leaving)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """The member waits for a partition of its target that another member still holds."""
        if member.state is not MemberState.UNRELEASED_PARTITIONS:
            return False
        for topic_id, partitions in self.target_assignment.get(member.member_id, {}).items():
            assigned = member.assigned.get(topic_id, frozenset())
            if any(p not in assigned and self.current_partition_epoch(topic_id, p) != NO_PARTITION_EPOCH
                   for p in partitions):
                return True
        return False

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def current_partition_epoch(self, topic_id: bytes, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), NO_PARTITION_EPOCH)

    def update_member(self, member: ConsumerGroupMember) -> None:
        """Put the member in (new or replacing its older self) and move its partition ownership."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for key in owned_partitions(member.assigned) | owned_partitions(member.pending_revocation):
            holder = self.partition_epochs.get(key)
            assert holder is None, f"{key} of group {self.group_id} is held at epoch {holder} by another member"
            self.partition_epochs[key] = member.member_epoch

    def remove_member(self, member_id: str) -> ConsumerGroupMember | None:
        """Forget the member, its partitions and its target (the assignor runs again for the rest)."""
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self._release(member)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == member_id:
            del self.static_members[member.instance_id]
        self.target_assignment.pop(member_id, None)
        return member

    def _release(self, member: ConsumerGroupMember) -> None:
        for key in owned_partitions(member.assigned) | owned_partitions(member.pending_revocation):
            self.partition_epochs.pop(key, None)

    def metadata_hash_of(self, topics: Mapping[str, tuple[bytes, int]]) -> int:
        """The metadata hash of what the members' subscriptions select of the cluster's topics."""
        return metadata_hash(self.subscribed_topic_names(set(topics)), topics)

    def subscribed_topic_names(self, topic_names: set[str]) -> set[str]:
        """Every topic of the cluster (topic_names) some member subscribes to, by name or by regex."""
        subscribed: set[str] = set()
        for member in self.members.values():
            subscribed.update(self.member_topics(member, topic_names))
        return subscribed

    def member_topics(self, member: ConsumerGroupMember, topic_names: set[str]) -> set[str]:
        """The topics of the cluster the member subscribes to: its names, and what its regex was
        last resolved to."""
        topics = topic_names.intersection(member.subscribed_topic_names)
        regex = regex_of(member)
        if regex is not None:
            topics.update(topic_names.intersection(self.resolved_regexes.get(regex, NOT_RESOLVED).topics))
        return topics

    def subscribed_regexes(self) -> dict[str, int]:
        """Each regex the members subscribe to, with how many do (subscribedRegularExpressions)."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            regex = regex_of(member)
            if regex is not None:
                counts[regex] = counts.get(regex, 0) + 1
        return counts

    def forget_unsubscribed_regexes(self) -> None:
        """Drop the resolution of every regex no member subscribes to any more (its record is
        tombstoned with the group's next write)."""
        subscribed = self.subscribed_regexes()
        for regex in [regex for regex in self.resolved_regexes if regex not in subscribed]:
            del self.resolved_regexes[regex]

    @property
    def last_regex_refresh_ms(self) -> int | None:
        """When the regexes were last resolved, None when none is (they are resolved together:
        any entry's time stands for all, as lastResolvedRegularExpressionRefreshTimeMs takes it)."""
        return next((resolved.timestamp_ms for resolved in self.resolved_regexes.values()), None)

    @property
    def last_regex_version(self) -> int:
        """The version of the topics the regexes were last resolved against; 0 when none is."""
        return next((resolved.version for resolved in self.resolved_regexes.values()), 0)
