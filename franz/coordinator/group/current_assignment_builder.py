"""A member's next assignment on its way to the target (Kafka's CurrentAssignmentBuilder).

A member reconciles in steps, each answered in a heartbeat:
1. partitions no longer in its target are revoked first: the member keeps
   `assigned ∩ target`, stays at its epoch in UNREVOKED_PARTITIONS, and moves
   on only once its heartbeat no longer reports any of the revoked ones;
2. then it moves to the target epoch and takes the partitions of its target
   that nobody holds; those still held by another member (not yet revoked
   there) wait in UNRELEASED_PARTITIONS and are handed over on a later
   heartbeat once free.
So a partition is never owned by two members at once (ConsumerGroup's
ownership invariant).

Only the topics the member subscribes to count (its names and what its regex resolved to,
by id): a target partition of another topic is treated as not in the target. When the
member changed its subscription in this heartbeat, a member otherwise left alone (stable at
the target epoch, or still revoking) gives up the partitions of topics it left at once, as
4.3's updateCurrentAssignment does, without waiting for a new target. Every step stamps the
epoch the member had as its previous epoch (ConsumerGroupMember.Builder.updateMemberEpoch),
also when the epoch stays.
"""

from __future__ import annotations

from collections.abc import Callable

from franz.coordinator.group.consumer_group import (
    NO_PARTITION_EPOCH,
    Assignment,
    ConsumerGroupMember,
    MemberState,
)

# (topic id, partition) -> epoch of the member holding it, or NO_PARTITION_EPOCH
PartitionEpoch = Callable[[bytes, int], int]
# the partitions a heartbeat reports as owned: (topic id, partitions) pairs, or None when not sent
OwnedPartitions = list[tuple[bytes, list[int]]] | None


def owns_any(owned: OwnedPartitions, partitions: Assignment) -> bool:
    """Whether the member still reports one of these partitions (not reporting counts as owning)."""
    if owned is None:
        return True
    return any(p in partitions.get(topic_id, ()) for topic_id, ps in owned for p in ps)


def reconcile(member: ConsumerGroupMember, target_epoch: int, target: Assignment,
              partition_epoch: PartitionEpoch, owned: OwnedPartitions, subscribed_topic_ids: frozenset[bytes],
              subscription_changed: bool = False) -> ConsumerGroupMember:
    """The member's next state towards the target (the member itself when it cannot move)."""
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(member, member.member_epoch, target_epoch, target, partition_epoch, owned,
                                    subscribed_topic_ids)
        if subscription_changed:
            return _without_unsubscribed_topics(member, owned, subscribed_topic_ids)
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(owned, member.pending_revocation):
            if subscription_changed:
                return _without_unsubscribed_topics(member, owned, subscribed_topic_ids)
            return member
        # All revoked: the epoch stays until the member is done revoking (KAFKA-19974, 4.2+), so
        # that a partition has one owner at any epoch.
    return _next_assignment(member, member.member_epoch, target_epoch, target, partition_epoch, owned,
                            subscribed_topic_ids)


def _without_unsubscribed_topics(member: ConsumerGroupMember, owned: OwnedPartitions,
                                 subscribed_topic_ids: frozenset[bytes]) -> ConsumerGroupMember:
    """updateCurrentAssignment: the partitions of topics the member no longer subscribes to join
    those pending revocation (all of them when it subscribes to nothing and revokes nothing)."""
    if not subscribed_topic_ids and not member.pending_revocation:
        assigned: Assignment = {}
        revoking: Assignment = dict(member.assigned)
    else:
        assigned = {topic_id: ps for topic_id, ps in member.assigned.items() if topic_id in subscribed_topic_ids}
        revoking = dict(member.pending_revocation)
        for topic_id, partitions in member.assigned.items():
            if topic_id not in subscribed_topic_ids:
                revoking[topic_id] = revoking.get(topic_id, frozenset()) | partitions
    if assigned == member.assigned:
        return member
    if revoking and owns_any(owned, revoking):
        return _moved(member, member.member_epoch, MemberState.UNREVOKED_PARTITIONS, assigned, revoking, {})
    # Removed, but already revoked: the state stays and the assignment shrinks.
    return _moved(member, member.member_epoch, member.state, assigned, member.pending_revocation, {})


def _next_assignment(member: ConsumerGroupMember, epoch: int, target_epoch: int, target: Assignment,
                     partition_epoch: PartitionEpoch, owned: OwnedPartitions,
                     subscribed_topic_ids: frozenset[bytes]) -> ConsumerGroupMember:
    """Partitions kept or being revoked keep the epoch they were assigned at; those handed
    over now are assigned at the target epoch (KIP-1251's assignment epochs). A topic the
    member does not subscribe to has no partition in its target."""
    assigned: dict[bytes, frozenset[int]] = {}
    revoking: dict[bytes, frozenset[int]] = {}
    incoming: dict[bytes, frozenset[int]] = {}
    unreleased = False
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, frozenset()) if topic_id in subscribed_topic_ids else frozenset()
        current = member.assigned.get(topic_id, frozenset())
        kept = current & wanted
        # A partition this member is itself still revoking is not another member's to release.
        revoking_here = member.pending_revocation.get(topic_id, frozenset())
        free = {p for p in wanted - kept if partition_epoch(topic_id, p) == NO_PARTITION_EPOCH or p in revoking_here}
        unreleased = unreleased or len(free) < len(wanted - kept)
        if kept:
            assigned[topic_id] = kept
        if current - kept:
            revoking[topic_id] = current - kept
        if free:
            incoming[topic_id] = frozenset(free)
    if revoking and owns_any(owned, revoking):
        return _moved(member, epoch, MemberState.UNREVOKED_PARTITIONS, assigned, revoking, {})
    for topic_id, partitions in incoming.items():
        assigned[topic_id] = assigned.get(topic_id, frozenset()) | partitions
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return _moved(member, target_epoch, state, assigned, {}, {(t, p): target_epoch for t, ps in incoming.items()
                                                             for p in ps})


def _moved(member: ConsumerGroupMember, epoch: int, state: MemberState, assigned: Assignment,
           revoking: Assignment, newly_assigned: dict[tuple[bytes, int], int]) -> ConsumerGroupMember:
    epochs = {}
    for held in (assigned, revoking):
        for topic_id, partitions in held.items():
            for p in partitions:
                key = (topic_id, p)
                epochs[key] = newly_assigned[key] if key in newly_assigned else member.assignment_epoch(topic_id, p)
    return member.with_epoch(epoch, state=state, assigned=assigned, pending_revocation=revoking,
                             assignment_epochs=epochs)
