"""The group coordinator's timers (kafka.coordinator.group.DelayedJoin, InitialDelayedJoin, DelayedHeartbeat).

All live in DelayedOperationPurgatory instances of the GroupCoordinator and run
their callbacks on the broker's event loop (the purgatory's reaper expires
them there, and check_and_complete is called from request handlers there), so
a callback may change group state without a lock.

- DelayedJoin (key ("join", group)): the join phase of a rebalance. Completes
  as soon as every member has rejoined (and no pending member is left), or at
  the rebalance timeout; either way the coordinator then completes the join.
- InitialDelayedJoin: the first rebalance of an Empty group waits
  group.initial.rebalance.delay.ms, and again while new members keep coming,
  up to the rebalance timeout; it never completes early.
- DelayedHeartbeat (key ("heartbeat", group, member)): a member's session. A
  heartbeat completes the current one and starts the next; if it expires
  while the member neither heartbeated nor waits in a join or sync, the
  member has failed.
- DelayedSync (key ("sync", group)): members of a new generation must send
  SyncGroup within the rebalance timeout, or are removed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from franz.server.purgatory import DelayedOperation

if TYPE_CHECKING:
    from franz.coordinator.group.group_coordinator import GroupCoordinator
    from franz.coordinator.group.group_metadata import ClassicGroup


class DelayedJoin(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, rebalance_timeout_ms: int) -> None:
        super().__init__(rebalance_timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        if self.group.has_all_members_joined():
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)

    def on_expiration(self) -> None:
        pass  # on_complete() completed the join phase


class InitialDelayedJoin(DelayedJoin):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, delay_ms: int,
                 remaining_ms: int) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.delay_ms_initial = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False  # only the timer ends the initial delay

    def on_complete(self) -> None:
        self.coordinator.on_initial_join_delay_over(self.group, self.remaining_ms)


class DelayedHeartbeat(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, member_id: str,
                 is_pending: bool, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.member_id = member_id
        self.is_pending = is_pending

    def try_complete(self) -> bool:
        if self.coordinator.heartbeat_satisfied(self.group, self.member_id, self.is_pending):
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator.on_heartbeat_expired(self.group, self.member_id, self.is_pending)


class DelayedSync(DelayedOperation):
    def __init__(self, coordinator: GroupCoordinator, group: ClassicGroup, generation_id: int,
                 timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        if not self.group.pending_sync_members or self.group.generation_id != self.generation_id:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        pass

    def on_expiration(self) -> None:
        self.coordinator.on_sync_expired(self.group, self.generation_id)
