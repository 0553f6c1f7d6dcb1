"""Server-side partition assignors of consumer groups (Kafka's UniformAssignor and RangeAssignor).

An assignor maps each member (its subscribed topic ids and its previous
target) to a target assignment. `group.consumer.assignors` names the ones a
broker offers; the first is the default, and a member may ask for another in
ConsumerGroupHeartbeat.ServerAssignor (the group uses the one most members ask for).

- uniform (the default): every partition of the subscribed topics to exactly
  one subscribed member, the counts differing by at most one between members
  that subscribe to the same topics, and sticky: a member keeps the partitions
  of its previous target while that stays within balance, so a rebalance moves
  as few partitions as it can.
- range: per topic, members in order (static members by instance id first,
  then by member id) take contiguous ranges, the first `partitions % members`
  one more; members subscribed to the same topics get the same partition
  numbers of each (co-partitioning for joins).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Protocol

from franz.coordinator.group.consumer_group import Assignment


@dataclasses.dataclass(frozen=True)
class MemberSpec:
    member_id: str
    instance_id: str | None
    topic_ids: frozenset[bytes]
    previous_target: Assignment


class PartitionAssignor(Protocol):
    name: str

    def assign(self, members: list[MemberSpec], partitions: dict[bytes, int]) -> dict[str, Assignment]:
        """The target of every member, given each topic's partition count."""


def _sorted_members(members: Iterable[MemberSpec]) -> list[MemberSpec]:
    return sorted(members, key=lambda m: (m.instance_id is None, m.instance_id or "", m.member_id))


def _freeze(assignment: dict[str, dict[bytes, set[int]]]) -> dict[str, Assignment]:
    return {member_id: {topic_id: frozenset(ps) for topic_id, ps in topics.items() if ps}
            for member_id, topics in assignment.items()}


class RangeAssignor:
    name = "range"

    def assign(self, members: list[MemberSpec], partitions: dict[bytes, int]) -> dict[str, Assignment]:
        ordered = _sorted_members(members)
        result: dict[str, dict[bytes, set[int]]] = {m.member_id: {} for m in ordered}
        for topic_id in sorted({t for m in ordered for t in m.topic_ids if t in partitions}):
            subscribers = [m for m in ordered if topic_id in m.topic_ids]
            quota, extra = divmod(partitions[topic_id], len(subscribers))
            start = 0
            for index, member in enumerate(subscribers):
                count = quota + (1 if index < extra else 0)
                if count:
                    result[member.member_id][topic_id] = set(range(start, start + count))
                start += count
        return _freeze(result)


class UniformAssignor:
    name = "uniform"

    def assign(self, members: list[MemberSpec], partitions: dict[bytes, int]) -> dict[str, Assignment]:
        ordered = _sorted_members(members)
        by_id = {m.member_id: m for m in ordered}
        subscribers: dict[bytes, list[str]] = {}
        for member in ordered:
            for topic_id in member.topic_ids:
                if topic_id in partitions:
                    subscribers.setdefault(topic_id, []).append(member.member_id)
        # A member's fair share: its part of each topic it shares with others.
        share = {m.member_id: math.ceil(sum(partitions[t] / len(subscribers[t])
                                            for t in m.topic_ids if t in subscribers)) for m in ordered}
        owner: dict[tuple[bytes, int], str] = {}
        counts = {m.member_id: 0 for m in ordered}
        for member in ordered:  # sticky: keep the previous target within the fair share
            for topic_id in sorted(member.previous_target):
                if topic_id not in subscribers or topic_id not in member.topic_ids:
                    continue
                for partition in sorted(member.previous_target[topic_id]):
                    key = (topic_id, partition)
                    if partition < partitions[topic_id] and key not in owner and counts[member.member_id] < share[
                            member.member_id]:
                        owner[key] = member.member_id
                        counts[member.member_id] += 1
        for topic_id in sorted(subscribers):  # the rest, each to the least loaded subscriber
            for partition in range(partitions[topic_id]):
                if (topic_id, partition) not in owner:
                    chosen = min(subscribers[topic_id], key=lambda member_id: counts[member_id])
                    owner[(topic_id, partition)] = chosen
                    counts[chosen] += 1
        self._balance(owner, counts, subscribers)
        result: dict[str, dict[bytes, set[int]]] = {member_id: {} for member_id in by_id}
        for (topic_id, partition), member_id in owner.items():
            result[member_id].setdefault(topic_id, set()).add(partition)
        return _freeze(result)

    @staticmethod
    def _balance(owner: dict[tuple[bytes, int], str], counts: dict[str, int],
                 subscribers: dict[bytes, list[str]]) -> None:
        """Move partitions from a member to a subscriber of the same topic holding two or more
        fewer, until a pass over the partitions moves none (every move lowers the sum of squared
        counts, so this ends; the pass count is bounded all the same)."""
        for _ in range(len(owner) + 1):
            moved = False
            for key in sorted(owner):
                holder = owner[key]
                taker = min(subscribers[key[0]], key=lambda member_id: counts[member_id])
                if counts[holder] - counts[taker] > 1:
                    owner[key] = taker
                    counts[holder] -= 1
                    counts[taker] += 1
                    moved = True
            if not moved:
                return


ASSIGNORS: dict[str, type] = {UniformAssignor.name: UniformAssignor, RangeAssignor.name: RangeAssignor}
