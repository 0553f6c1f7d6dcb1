"""A member's steps towards its target: revoke first, then take only partitions nobody holds, and
only of topics it subscribes to."""

from __future__ import annotations

from franz.coordinator.group.consumer_group import NO_PARTITION_EPOCH, ConsumerGroupMember, MemberState
from franz.coordinator.group.current_assignment_builder import reconcile

T = b"\x07" * 16
U = b"\x08" * 16
ONLY_T = frozenset({T})


def _free(_topic, _partition) -> int:
    return NO_PARTITION_EPOCH


def test_a_new_member_takes_its_free_target_at_the_target_epoch():
    member = ConsumerGroupMember("m")
    after = reconcile(member, 3, {T: frozenset({0, 1})}, _free, [], ONLY_T)
    assert (after.member_epoch, after.state, after.assigned) == (3, MemberState.STABLE, {T: frozenset({0, 1})})
    assert after.previous_member_epoch == 0


def test_partitions_leaving_the_target_are_revoked_before_the_epoch_moves():
    member = ConsumerGroupMember("m", member_epoch=3, assigned={T: frozenset({0, 1, 2})})
    revoking = reconcile(member, 4, {T: frozenset({0, 3})}, _free, [(T, [0, 1, 2])], ONLY_T)
    assert revoking.state is MemberState.UNREVOKED_PARTITIONS and revoking.member_epoch == 3
    assert revoking.assigned == {T: frozenset({0})} and revoking.pending_revocation == {T: frozenset({1, 2})}
    # Still reported as owned: no progress.
    assert reconcile(revoking, 4, {T: frozenset({0, 3})}, _free, [(T, [0, 1])], ONLY_T) is revoking
    # Not reported any more: the member moves to the target epoch and gets partition 3.
    done = reconcile(revoking, 4, {T: frozenset({0, 3})}, _free, [(T, [0])], ONLY_T)
    assert (done.member_epoch, done.state, done.assigned) == (4, MemberState.STABLE, {T: frozenset({0, 3})})


def test_a_partition_another_member_still_holds_waits_as_unreleased():
    def held(_topic, partition) -> int:
        return 5 if partition == 1 else NO_PARTITION_EPOCH

    member = ConsumerGroupMember("m", member_epoch=5, assigned={T: frozenset({0})})
    waiting = reconcile(member, 6, {T: frozenset({0, 1})}, held, [(T, [0])], ONLY_T)
    assert (waiting.member_epoch, waiting.state, waiting.assigned) == (
        6, MemberState.UNRELEASED_PARTITIONS, {T: frozenset({0})})
    released = reconcile(waiting, 6, {T: frozenset({0, 1})}, _free, [(T, [0])], ONLY_T)
    assert released.state is MemberState.STABLE and released.assigned == {T: frozenset({0, 1})}


def test_a_stable_member_at_the_target_epoch_is_left_alone():
    member = ConsumerGroupMember("m", member_epoch=2, assigned={T: frozenset({0})})
    assert reconcile(member, 2, {T: frozenset({1})}, _free, None, ONLY_T) is member


def test_a_partition_the_member_is_itself_revoking_comes_back_at_once():
    """CurrentAssignmentBuilder.computeNextAssignment: a partition pending revocation by this
    very member is not another's to release, so a target that gives it back hands it over in
    the same step (not one heartbeat later)."""
    def held_by_me(_topic, partition) -> int:
        return 1 if partition in (2, 3) else NO_PARTITION_EPOCH

    member = ConsumerGroupMember("m", member_epoch=1, state=MemberState.UNREVOKED_PARTITIONS,
                                 assigned={T: frozenset({0, 1})}, pending_revocation={T: frozenset({2, 3})})
    back = reconcile(member, 3, {T: frozenset({0, 1, 2, 3})}, held_by_me, [(T, [0, 1])], ONLY_T)
    assert (back.member_epoch, back.state, back.assigned) == (3, MemberState.STABLE, {T: frozenset({0, 1, 2, 3})})


def test_a_member_done_revoking_with_more_to_revoke_keeps_its_epoch():
    """KAFKA-19974 (4.2+): leaving UNREVOKED_PARTITIONS for another round of revocation does not
    bump the member epoch, so that a partition has one owner at any epoch."""
    member = ConsumerGroupMember("m", member_epoch=3, state=MemberState.UNREVOKED_PARTITIONS,
                                 assigned={T: frozenset({0, 1})}, pending_revocation={T: frozenset({2})})
    again = reconcile(member, 5, {T: frozenset({0})}, _free, [(T, [0, 1])], ONLY_T)
    assert (again.member_epoch, again.state, again.pending_revocation) == (
        3, MemberState.UNREVOKED_PARTITIONS, {T: frozenset({1})})


def test_a_target_partition_of_a_topic_the_member_left_is_not_taken_and_its_own_are_revoked():
    """computeNextAssignment: a topic not subscribed to has no partition in the target, even when
    the target (computed before the subscription changed) still names it."""
    member = ConsumerGroupMember("m", member_epoch=3, assigned={T: frozenset({0}), U: frozenset({0})})
    after = reconcile(member, 4, {T: frozenset({0, 1}), U: frozenset({0, 1})}, _free, [(T, [0]), (U, [0])], ONLY_T)
    assert (after.state, after.member_epoch, after.assigned, after.pending_revocation) == (
        MemberState.UNREVOKED_PARTITIONS, 3, {T: frozenset({0})}, {U: frozenset({0})})
    assert after.previous_member_epoch == 3  # updateMemberEpoch(3): the epoch it had, even unchanged


def test_a_changed_subscription_revokes_the_left_topics_without_a_new_target():
    """updateCurrentAssignment: a member stable at the target epoch that unsubscribes from a topic
    gives its partitions up in the same heartbeat; with the subscription unchanged it is left alone."""
    member = ConsumerGroupMember("m", member_epoch=4, previous_member_epoch=2,
                                 assigned={T: frozenset({0}), U: frozenset({1})})
    target = {T: frozenset({0}), U: frozenset({1})}
    assert reconcile(member, 4, target, _free, [(T, [0]), (U, [1])], ONLY_T) is member
    revoking = reconcile(member, 4, target, _free, [(T, [0]), (U, [1])], ONLY_T, subscription_changed=True)
    assert (revoking.state, revoking.member_epoch, revoking.previous_member_epoch) == (
        MemberState.UNREVOKED_PARTITIONS, 4, 4)
    assert revoking.assigned == {T: frozenset({0})} and revoking.pending_revocation == {U: frozenset({1})}
    # Already no longer owned: the assignment shrinks and the member stays stable.
    shrunk = reconcile(member, 4, target, _free, [(T, [0])], ONLY_T, subscription_changed=True)
    assert (shrunk.state, shrunk.assigned, shrunk.pending_revocation) == (MemberState.STABLE, {T: frozenset({0})}, {})
    # Subscribed to nothing (a regex not resolved yet): everything is to be revoked.
    nothing = reconcile(member, 4, target, _free, None, frozenset(), subscription_changed=True)
    assert nothing.assigned == {} and nothing.pending_revocation == {T: frozenset({0}), U: frozenset({1})}


def test_a_member_still_revoking_adds_the_left_topics_to_what_it_revokes():
    member = ConsumerGroupMember("m", member_epoch=4, state=MemberState.UNREVOKED_PARTITIONS,
                                 assigned={T: frozenset({0}), U: frozenset({1})}, pending_revocation={T: frozenset({2})})
    owned = [(T, [0, 2]), (U, [1])]
    assert reconcile(member, 5, {T: frozenset({0})}, _free, owned, frozenset({T, U})) is member
    after = reconcile(member, 5, {T: frozenset({0})}, _free, owned, ONLY_T, subscription_changed=True)
    assert after.assigned == {T: frozenset({0})} and after.pending_revocation == {T: frozenset({2}), U: frozenset({1})}
