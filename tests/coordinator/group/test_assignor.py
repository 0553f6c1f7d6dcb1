"""The server-side assignors of consumer groups: every partition to exactly one subscriber,
balanced, and (uniform) sticky across rebalances."""

from __future__ import annotations

import pytest

from franz.coordinator.group.assignor import MemberSpec, RangeAssignor, UniformAssignor

T1, T2 = b"\x01" * 16, b"\x02" * 16


def _members(*specs: tuple[str, tuple[bytes, ...]], previous=None) -> list[MemberSpec]:
    previous = previous or {}
    return [MemberSpec(member_id, None, frozenset(topics), previous.get(member_id, {}))
            for member_id, topics in specs]


def _owners(result) -> dict[tuple[bytes, int], str]:
    owners: dict[tuple[bytes, int], str] = {}
    for member_id, assignment in result.items():
        for topic_id, partitions in assignment.items():
            for partition in partitions:
                assert (topic_id, partition) not in owners, f"{partition} given twice"
                owners[(topic_id, partition)] = member_id
    return owners


def _counts(result) -> dict[str, int]:
    return {member_id: sum(len(ps) for ps in assignment.values()) for member_id, assignment in result.items()}


@pytest.mark.parametrize("assignor", [UniformAssignor(), RangeAssignor()])
@pytest.mark.parametrize("members", [1, 2, 3, 5, 8, 9])
def test_every_partition_goes_to_exactly_one_member_and_counts_differ_by_at_most_one(assignor, members):
    specs = _members(*[(f"m{i}", (T1,)) for i in range(members)])
    result = assignor.assign(specs, {T1: 8})
    assert set(_owners(result)) == {(T1, p) for p in range(8)}
    counts = _counts(result)
    assert max(counts.values()) - min(counts.values()) <= 1


def test_uniform_is_sticky_a_new_member_takes_only_what_balance_needs():
    before = UniformAssignor().assign(_members(("a", (T1,)), ("b", (T1,))), {T1: 8})
    after = UniformAssignor().assign(_members(("a", (T1,)), ("b", (T1,)), ("c", (T1,)), previous=before), {T1: 8})
    moved = {key for key, owner in _owners(after).items() if _owners(before).get(key) != owner}
    assert len(moved) == 2 and all(_owners(after)[key] == "c" for key in moved)
    assert sorted(_counts(after).values()) == [2, 3, 3]


def test_uniform_rebalances_a_member_left_above_its_share():
    previous = {"a": {T1: frozenset(range(7))}}
    result = UniformAssignor().assign(_members(("a", (T1,)), ("b", (T1,)), ("c", (T1,)), previous=previous), {T1: 7})
    assert sorted(_counts(result).values()) == [2, 2, 3]


def test_uniform_gives_a_topic_only_to_its_subscribers():
    result = UniformAssignor().assign(_members(("a", (T1,)), ("b", (T1, T2))), {T1: 4, T2: 4})
    owners = _owners(result)
    assert all(owners[(T2, p)] == "b" for p in range(4))
    assert len(owners) == 8 and _counts(result) == {"a": 4, "b": 4}


def test_range_hands_out_contiguous_ranges_in_member_order_and_co_partitions_topics():
    result = RangeAssignor().assign(_members(("b", (T1, T2)), ("a", (T1, T2))), {T1: 5, T2: 5})
    assert result["a"] == {T1: frozenset({0, 1, 2}), T2: frozenset({0, 1, 2})}
    assert result["b"] == {T1: frozenset({3, 4}), T2: frozenset({3, 4})}


def test_range_orders_static_members_by_instance_id_first():
    specs = [MemberSpec("a", None, frozenset({T1}), {}), MemberSpec("z", "i1", frozenset({T1}), {})]
    assert RangeAssignor().assign(specs, {T1: 2}) == {"z": {T1: frozenset({0})}, "a": {T1: frozenset({1})}}
