"""The share group assignor of Kafka 4.x, "simple" (SimpleAssignor with its homogeneous and
heterogeneous assignment builders).

Share group members do not own partitions exclusively: records are handed out one
acquisition at a time, so a partition may go to several members. The assignor
balances first and keeps what members had second:

- Every member subscribed to the same topics (homogeneous): with M members and P
  assignable partitions, each partition goes to `ceil(M / P)` members (one each
  while members are fewer than partitions), and member i of M gets
  `ceil(s * (i + 1)) - ceil(s * i)` partitions where s = sharing * P / M.
- Otherwise (heterogeneous) the same is done topic by topic, among that topic's
  subscribers.

Steps, as Kafka's builders take them: keep each member's partitions that are still
assignable and subscribed; trim members above their count; take partitions away
from members where a partition has more than its sharing; then hand out what is
left, partition by partition, round-robin over the members still short. A full
round that hands out nothing leaves a partition under-shared, as Kafka tolerates.
Only assignable partitions are given: those whose share-partition state has been
initialized (ShareGroupStatePartitionMetadata's InitializedTopics).

Members are taken in member id order; Kafka takes them in a HashMap's order, which
no client can observe or rely on.
"""

from __future__ import annotations

from typing import Final

NAME: Final = "simple"

TopicPartition = tuple[bytes, int]
Assignment = dict[bytes, frozenset[int]]


def assign(subscriptions: dict[str, frozenset[bytes]], assignable: dict[bytes, frozenset[int]],
           current: dict[str, Assignment]) -> dict[str, Assignment]:
    """The target assignment of every member: `subscriptions` holds each member's subscribed
    topic ids, `assignable` the partitions that may be given, `current` the last target."""
    if not subscriptions:
        return {}
    member_ids = sorted(subscriptions)
    topic_sets = {subscriptions[m] for m in member_ids}
    result: dict[str, dict[bytes, set[int]]] = {m: {} for m in member_ids}
    if len(topic_sets) == 1:
        topics = sorted(next(iter(topic_sets)))
        groups = [(member_ids, topics)]
    else:
        groups = [([m for m in member_ids if topic in subscriptions[m]], [topic])
                  for topic in sorted(set().union(*topic_sets))]
    for members, topics in groups:
        targets = [(topic, p) for topic in topics for p in sorted(assignable.get(topic, ()))]
        for member_id, held in _assign_among(members, targets, current).items():
            for topic, partition in held:
                result[member_id].setdefault(topic, set()).add(partition)
    return {m: {t: frozenset(ps) for t, ps in held.items()} for m, held in result.items()}


def _assign_among(members: list[str], targets: list[TopicPartition],
                  current: dict[str, Assignment]) -> dict[str, list[TopicPartition]]:
    if not members or not targets:
        return {m: [] for m in members}
    count, partitions = len(members), len(targets)
    sharing = (count + partitions - 1) // partitions
    precise = sharing * partitions / count
    desired = {m: _ceil(precise * (i + 1)) - _ceil(precise * i) for i, m in enumerate(members)}
    wanted = set(targets)
    held: dict[str, list[TopicPartition]] = {}
    for member_id in members:
        previous = current.get(member_id, {})
        kept = [(t, p) for t in sorted(previous) for p in sorted(previous[t]) if (t, p) in wanted]
        held[member_id] = kept[:desired[member_id]]  # an overfilled member gives up its last ones
    holders: dict[TopicPartition, list[str]] = {tp: [] for tp in targets}
    for member_id in members:
        for tp in held[member_id]:
            holders[tp].append(member_id)
    for tp in targets:  # over-shared partitions lose their last holders
        while len(holders[tp]) > sharing:
            member_id = holders[tp].pop()
            held[member_id].remove(tp)
    unfilled = [m for m in members if len(held[m]) < desired[m]]
    cursor = 0
    for tp in targets:
        while len(holders[tp]) < sharing and unfilled:
            for step in range(len(unfilled)):
                member_id = unfilled[(cursor + step) % len(unfilled)]
                if tp in held[member_id]:
                    continue
                held[member_id].append(tp)
                holders[tp].append(member_id)
                index = (cursor + step) % len(unfilled)
                if len(held[member_id]) >= desired[member_id]:
                    unfilled.pop(index)
                    cursor = index
                else:
                    cursor = index + 1
                break
            else:
                break  # a full round gave nothing: leave this partition under-shared
    return held


def _ceil(value: float) -> int:
    whole = int(value)
    return whole + (1 if value - whole > 1e-9 else 0)
