"""The share groups' simple assignor (SimpleAssignor): balance, sharing, stickiness, topics."""

from __future__ import annotations

from collections import Counter

from franz.coordinator.group import simple_assignor

T1, T2 = b"\x01" * 16, b"\x02" * 16


def _counts(result: dict) -> dict[str, int]:
    return {member: sum(len(ps) for ps in assignment.values()) for member, assignment in result.items()}


def _holders(result: dict) -> Counter:
    return Counter((topic, p) for assignment in result.values() for topic, ps in assignment.items() for p in ps)


def test_fewer_members_than_partitions_split_them_without_sharing():
    result = simple_assignor.assign({"a": frozenset({T1}), "b": frozenset({T1})}, {T1: frozenset(range(5))}, {})
    assert _counts(result) == {"a": 3, "b": 2}
    assert set(_holders(result).values()) == {1} and len(_holders(result)) == 5


def test_more_members_than_partitions_share_each_partition_between_ceil_m_over_p():
    members = {name: frozenset({T1}) for name in "abcde"}
    result = simple_assignor.assign(members, {T1: frozenset(range(3))}, {})
    # sharing = ceil(5/3) = 2; member i gets ceil(1.2(i+1)) - ceil(1.2i): 2, 1, 1, 1, 1
    assert sorted(_counts(result).values()) == [1, 1, 1, 1, 2]
    assert sorted(_holders(result).values()) == [2, 2, 2]
    assert all(len(ps) == len(set(ps)) for a in result.values() for ps in a.values())


def test_one_partition_goes_to_every_member():
    members = {name: frozenset({T1}) for name in "abc"}
    result = simple_assignor.assign(members, {T1: frozenset({0})}, {})
    assert result == {name: {T1: frozenset({0})} for name in "abc"}


def test_a_joining_member_takes_partitions_from_the_others_who_keep_the_rest():
    before = simple_assignor.assign({"a": frozenset({T1}), "b": frozenset({T1})}, {T1: frozenset(range(6))}, {})
    after = simple_assignor.assign({m: frozenset({T1}) for m in "abc"}, {T1: frozenset(range(6))}, before)
    assert _counts(after) == {"a": 2, "b": 2, "c": 2}
    for member in "ab":
        assert after[member][T1] <= before[member][T1]  # sticky: only given up, never moved
    assert set(_holders(after).values()) == {1}


def test_only_assignable_partitions_are_given():
    result = simple_assignor.assign({"a": frozenset({T1})}, {T1: frozenset({0, 2})}, {"a": {T1: frozenset({1})}})
    assert result == {"a": {T1: frozenset({0, 2})}}


def test_members_of_different_subscriptions_are_balanced_topic_by_topic():
    result = simple_assignor.assign({"a": frozenset({T1}), "b": frozenset({T1, T2})},
                                    {T1: frozenset(range(4)), T2: frozenset(range(2))}, {})
    assert result["a"].get(T2) is None and result["b"][T2] == frozenset({0, 1})
    assert len(result["a"][T1]) == 2 and len(result["b"][T1]) == 2
    assert result["a"][T1].isdisjoint(result["b"][T1])


def test_no_members_no_assignment():
    assert simple_assignor.assign({}, {T1: frozenset({0})}, {}) == {}
