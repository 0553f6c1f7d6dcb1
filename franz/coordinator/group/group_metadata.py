"""A classic group and its members (ClassicGroup, ClassicGroupMember, ClassicGroupState).

States and the moves between them (Kafka's ClassicGroupState):

    Empty -----------------> PreparingRebalance <------------------+
      ^                        |    ^                               |
      | (all members gone)     |    | (join / leave / failure)      |
      +------------------------+    |                               |
                               v    |                               |
                         CompletingRebalance ---(leader syncs)---> Stable
    any state ---> Dead (the group is deleted or moved away)

- Empty: no members (offsets may remain).
- PreparingRebalance: waiting for every member to (re)join, up to the
  rebalance timeout; the first join into an Empty group waits
  group.initial.rebalance.delay.ms for more members.
- CompletingRebalance: the generation is set; waiting for the leader's
  assignment in SyncGroup.
- Stable: assignment handed out; members heartbeat.
- Dead: no longer served.

Invariants (asserted): a transition is one of the arrows above; the leader is
a member or None; `num_members_awaiting_join` counts members with a pending
join answer; `_protocol_votes[name]` counts the members supporting `name`;
every static member's instance id maps to its member id.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from collections.abc import Iterable
from typing import Any


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_VALID_PREVIOUS = {
    GroupState.PREPARING_REBALANCE: {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY},
    GroupState.COMPLETING_REBALANCE: {GroupState.PREPARING_REBALANCE},
    GroupState.STABLE: {GroupState.COMPLETING_REBALANCE},
    GroupState.EMPTY: {GroupState.PREPARING_REBALANCE},
    GroupState.DEAD: set(GroupState),
}


class GroupError(Exception):
    """A request refused with a Kafka error code."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message or str(code))
        self.code = code


@dataclasses.dataclass(eq=False)
class ClassicGroupMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    supported_protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    join_future: asyncio.Future | None = None
    sync_future: asyncio.Future | None = None
    is_new: bool = False
    heartbeat_satisfied: bool = False

    @property
    def is_awaiting_join(self) -> bool:
        return self.join_future is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.sync_future is not None

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    def metadata(self, protocol: str) -> bytes:
        for name, metadata in self.supported_protocols:
            if name == protocol:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return [(n, bytes(m)) for n, m in protocols] == [(n, bytes(m)) for n, m in self.supported_protocols]

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.supported_protocols:
            if name in candidates:
                return name
        raise AssertionError(f"member {self.member_id} supports none of {candidates}")

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.supported_protocols]


class ClassicGroup:
    def __init__(self, group_id: str, now_ms: int, state: GroupState = GroupState.EMPTY) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state = state
        self.current_state_timestamp_ms: int | None = now_ms
        self.generation_id = 0
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.leader_id: str | None = None
        self.members: dict[str, ClassicGroupMember] = {}
        self.static_members: dict[str, str] = {}
        self.pending_members: set[str] = set()
        self.pending_sync_members: set[str] = set()
        self.num_members_awaiting_join = 0
        self._protocol_votes: dict[str, int] = {}
        self.new_member_added = False

    # -- state -----------------------------------------------------------------

    def is_in_state(self, *states: GroupState) -> bool:
        return self.state in states

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        assert self.state in _VALID_PREVIOUS[target], \
            f"group {self.group_id} should be in {_VALID_PREVIOUS[target]} to move to {target}, is {self.state}"
        self.previous_state, self.state = self.state, target
        self.current_state_timestamp_ms = now_ms

    # -- members ---------------------------------------------------------------

    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    @property
    def size(self) -> int:
        return len(self.members)

    @property
    def is_empty(self) -> bool:
        return not self.members

    def add(self, member: ClassicGroupMember, join_future: asyncio.Future | None = None) -> None:
        assert member.member_id not in self.members
        if not self.members:
            self.protocol_type = member.protocol_type
        assert self.protocol_type == member.protocol_type
        assert self.supports_protocols(member.protocol_type, member.supported_protocols)
        if self.leader_id is None:
            self.leader_id = member.member_id
        if member.is_static:
            self.static_members[member.group_instance_id] = member.member_id
        self.members[member.member_id] = member
        self._count_protocols(member.protocol_names(), 1)
        member.join_future = join_future
        if join_future is not None:
            self.num_members_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> ClassicGroupMember | None:
        """Drop a member, or a pending member (KIP-394) that has not joined yet."""
        self.pending_members.discard(member_id)
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self._count_protocols(member.protocol_names(), -1)
        if member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        if member.is_static and self.static_members.get(member.group_instance_id) == member_id:
            del self.static_members[member.group_instance_id]
        self.pending_sync_members.discard(member_id)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def update_member(self, member: ClassicGroupMember, protocols: list[tuple[str, bytes]],
                      rebalance_timeout_ms: int, session_timeout_ms: int,
                      join_future: asyncio.Future | None) -> None:
        self._count_protocols(member.protocol_names(), -1)
        member.supported_protocols = [(n, bytes(m)) for n, m in protocols]
        self._count_protocols(member.protocol_names(), 1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_future is not None and not member.is_awaiting_join:
            self.num_members_awaiting_join += 1
        elif join_future is None and member.is_awaiting_join:
            self.num_members_awaiting_join -= 1
        member.join_future = join_future

    def complete_join_future(self, member: ClassicGroupMember, response: dict) -> None:
        future, member.join_future = member.join_future, None
        if future is not None:
            self.num_members_awaiting_join -= 1
            assert self.num_members_awaiting_join >= 0
            if not future.done():
                future.set_result(response)

    def complete_sync_future(self, member: ClassicGroupMember, response: dict) -> None:
        future, member.sync_future = member.sync_future, None
        if future is not None and not future.done():
            future.set_result(response)

    def replace_static_member(self, instance_id: str, old_member_id: str, new_member_id: str) -> ClassicGroupMember:
        """Give a static member a new member id (it rejoined without its old one)."""
        member = self.members.pop(old_member_id)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        self.static_members[instance_id] = new_member_id
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        return member

    def static_member_id(self, instance_id: str | None) -> str | None:
        return None if instance_id is None else self.static_members.get(instance_id)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_members_awaiting_join and not self.pending_members

    def not_yet_rejoined_members(self) -> list[ClassicGroupMember]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def maybe_elect_new_joined_leader(self) -> bool:
        """A leader that did not rejoin hands over to one that did."""
        leader = self.members.get(self.leader_id) if self.leader_id is not None else None
        if leader is not None and leader.is_awaiting_join:
            return True
        for member in self.members.values():
            if member.is_awaiting_join:
                self.leader_id = member.member_id
                return True
        return False

    # -- protocols ---------------------------------------------------------------

    def _count_protocols(self, names: Iterable[str], delta: int) -> None:
        for name in names:
            count = self._protocol_votes.get(name, 0) + delta
            assert count >= 0
            if count:
                self._protocol_votes[name] = count
            else:
                self._protocol_votes.pop(name, None)

    def supports_protocols(self, protocol_type: str, protocols: list[tuple[str, Any]]) -> bool:
        if self.is_in_state(GroupState.EMPTY):  # not merely memberless: a rebalance keeps its protocol type
            return bool(protocol_type) and bool(protocols)
        return protocol_type == self.protocol_type and any(
            self._protocol_votes.get(name, 0) == len(self.members) for name, _ in protocols)

    def candidate_protocols(self) -> set[str]:
        return {name for name, count in self._protocol_votes.items() if count == len(self.members)}

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        assert candidates, f"no protocol supported by every member of {self.group_id}"
        votes: dict[str, int] = {}
        for member in self.members.values():
            name = member.vote(candidates)
            votes[name] = votes.get(name, 0) + 1
        return max(votes, key=lambda name: votes[name])

    def init_next_generation(self, now_ms: int) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.pending_sync_members = set(self.members)
            self.transition_to(GroupState.COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.pending_sync_members = set()
            self.transition_to(GroupState.EMPTY, now_ms)

    # -- views -------------------------------------------------------------------

    def current_members_for_leader(self) -> list[dict]:
        assert self.protocol_name is not None
        return [{"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                 "metadata": m.metadata(self.protocol_name)} for m in self.members.values()]

    def metadata_value(self, assignment: dict[str, bytes] | None = None) -> dict:
        """The GroupMetadataValue of the group now (assignments from `assignment` or the members)."""
        members = []
        for member in self.members.values():
            members.append({
                "member_id": member.member_id, "group_instance_id": member.group_instance_id,
                "client_id": member.client_id, "client_host": member.client_host,
                "rebalance_timeout": member.rebalance_timeout_ms, "session_timeout": member.session_timeout_ms,
                "subscription": member.metadata(self.protocol_name) if self.protocol_name else b"",
                "assignment": (assignment or {}).get(member.member_id, member.assignment)})
        return {"protocol_type": self.protocol_type or "", "generation": self.generation_id,
                "protocol": self.protocol_name, "leader": self.leader_id,
                "current_state_timestamp": self.current_state_timestamp_ms
                if self.current_state_timestamp_ms is not None else -1,
                "members": members}

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to (consumer protocol); None when unknown."""
        from franz.coordinator.group.group_coordinator_record_serde import parse_consumer_subscription_topics
        if self.protocol_type != "consumer" or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            parsed = parse_consumer_subscription_topics(member.metadata(self.protocol_name))
            if parsed is None:
                return None
            topics.update(parsed)
        return topics

    @classmethod
    def from_record(cls, group_id: str, value: dict, now_ms: int) -> ClassicGroup:
        """A group as loaded from its GroupMetadataValue: Empty without members, else Stable."""
        members = value["members"]
        state = GroupState.STABLE if members else GroupState.EMPTY
        group = cls(group_id, now_ms, state)
        group.protocol_type = value["protocol_type"] or None
        group.generation_id = value["generation"]
        group.protocol_name = value["protocol"]
        timestamp = value.get("current_state_timestamp", -1)
        group.current_state_timestamp_ms = timestamp if timestamp >= 0 else None
        for entry in members:
            protocols = [(group.protocol_name, bytes(entry["subscription"]))] if group.protocol_name else []
            member = ClassicGroupMember(
                entry["member_id"], entry["group_instance_id"], entry["client_id"], entry["client_host"],
                entry["rebalance_timeout"] if entry["rebalance_timeout"] >= 0 else entry["session_timeout"],
                entry["session_timeout"], group.protocol_type or "", protocols, bytes(entry["assignment"]))
            group.members[member.member_id] = member
            group._count_protocols(member.protocol_names(), 1)
            if member.is_static:
                group.static_members[member.group_instance_id] = member.member_id
        group.leader_id = value["leader"] if value["leader"] in group.members else next(iter(group.members), None)
        return group
