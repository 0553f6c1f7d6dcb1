"""Where a streams group member is on its way to its target assignment (Kafka's streams MemberState).

The values are what StreamsGroupCurrentMemberAssignmentValue.State stores. A state this
version does not know (written by a newer coordinator) reads as UNKNOWN, and
CurrentAssignmentBuilder fences such a member so that it rejoins from scratch.
"""

from __future__ import annotations

import enum


class MemberState(enum.Enum):
    STABLE = 1
    # the member must revoke tasks before it can move to the next epoch
    UNREVOKED_TASKS = 2
    # the member is at the target epoch but waits for tasks other members have not released yet
    UNRELEASED_TASKS = 3
    UNKNOWN = 127

    @classmethod
    def from_value(cls, value: int) -> MemberState:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN
