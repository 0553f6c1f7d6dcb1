"""The classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup (GroupMetadataManager's classic part).

Owns the groups of this node and drives their state machine (group_metadata.py
draws it): members join (a new dynamic member first gets its member id with
MEMBER_ID_REQUIRED, KIP-394), the join phase waits for every member
(DelayedJoin, or InitialDelayedJoin for an Empty group), a generation is made
and the leader's assignment is written as a GroupMetadata record to
`__consumer_offsets` before any member gets it; members then heartbeat
(DelayedHeartbeat), and a member that leaves, fails its session or comes back
with other protocols starts the next rebalance. Static members
(group.instance.id) keep their place across restarts: a rejoin with a new
member id replaces the old one, which is fenced.

Everything here runs on the broker's event loop: handlers, purgatory
callbacks and write completions, so state changes need no lock. A handler
that awaits (a parked join, a sync, a write) re-checks the group after it.

Error codes are Kafka's for each case: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, GROUP_MAX_SIZE_REACHED,
FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

from franz.coordinator.group.delayed_group_operations import (
    DelayedHeartbeat,
    DelayedJoin,
    DelayedSync,
    InitialDelayedJoin,
)
from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics
from franz.coordinator.group.group_metadata import ClassicGroup, ClassicGroupMember, GroupError, GroupState
from franz.protocol.errors import Errors
from franz.records.builder import now_ms
from franz.server.purgatory import DelayedOperationPurgatory
from franz.server.request_channel import waiting_on_others

logger = logging.getLogger(__name__)

UNKNOWN_MEMBER_ID = ""
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000  # classic group new member join timeout


async def _answer(future: asyncio.Future) -> Any:
    """A join or sync answer: the request waits on the group (its remote time) unless it is ready."""
    if not future.done():
        waiting_on_others()
    return await future


@dataclasses.dataclass(frozen=True)
class GroupConfig:
    """The broker settings the group coordinator reads (GroupCoordinatorConfig)."""
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3000
    max_size: int = 2**31 - 1
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600_000
    offset_metadata_max_bytes: int = 4096
    offsets_topic_num_partitions: int = 50

    @classmethod
    def from_kafka_config(cls, config) -> GroupConfig:
        return cls(config["group.min.session.timeout.ms"], config["group.max.session.timeout.ms"],
                   config["group.initial.rebalance.delay.ms"], config["group.max.size"],
                   config["offsets.retention.minutes"] * 60_000, config["offsets.retention.check.interval.ms"],
                   config["offset.metadata.max.bytes"], config["offsets.topic.num.partitions"])


# A write of group metadata: (group, GroupMetadataValue dict or None for a tombstone) -> awaitable.
MetadataWriter = Callable[[ClassicGroup, dict | None], Coroutine[Any, Any, None]]


def join_error(version: int, code: int, member_id: str = UNKNOWN_MEMBER_ID) -> dict:
    return {"error_code": code, "generation_id": -1, "protocol_type": None,
            "protocol_name": None if version >= 7 else "", "leader": "", "skip_assignment": False,
            "member_id": member_id, "members": []}


def sync_answer(code: int, assignment: bytes = b"", protocol_type: str | None = None,
                 protocol_name: str | None = None) -> dict:
    return {"error_code": code, "protocol_type": protocol_type, "protocol_name": protocol_name,
            "assignment": assignment}


class GroupCoordinator:
    def __init__(self, config: GroupConfig, write_metadata: MetadataWriter,
                 clock_ms: Callable[[], int] = now_ms, metrics: GroupCoordinatorMetrics | None = None) -> None:
        self.config = config
        self.metrics = metrics if metrics is not None else GroupCoordinatorMetrics()
        self.groups: dict[str, ClassicGroup] = {}
        self._write_metadata = write_metadata
        self._clock_ms = clock_ms
        self.join_purgatory: DelayedOperationPurgatory = DelayedOperationPurgatory("Rebalance")
        self.heartbeat_purgatory: DelayedOperationPurgatory = DelayedOperationPurgatory("Heartbeat")
        self._background: set[asyncio.Task] = set()

    def startup(self) -> None:
        self.join_purgatory.start()
        self.heartbeat_purgatory.start()

    async def shutdown(self) -> None:
        await self.join_purgatory.shutdown()
        await self.heartbeat_purgatory.shutdown()
        for task in list(self._background):
            task.cancel()

    def group(self, group_id: str) -> ClassicGroup | None:
        return self.groups.get(group_id)

    def get_or_create_group(self, group_id: str) -> ClassicGroup:
        group = self.groups.get(group_id)
        if group is None:
            group = ClassicGroup(group_id, self._clock_ms())
            self.groups[group_id] = group
        return group

    # -- JoinGroup ---------------------------------------------------------------

    def invalid_join(self, version: int, body: dict) -> dict | None:
        """The answer to a JoinGroup refused whatever the group (GroupCoordinatorService.joinGroup):
        no group id, or a session timeout outside the broker's bounds."""
        if not body["group_id"]:
            return join_error(version, Errors.INVALID_GROUP_ID, body["member_id"])
        if not self.config.min_session_timeout_ms <= body["session_timeout_ms"] <= self.config.max_session_timeout_ms:
            return join_error(version, Errors.INVALID_SESSION_TIMEOUT, body["member_id"])
        return None

    async def join_group(self, version: int, client_id: str, client_host: str, body: dict) -> dict:
        group_id, member_id = body["group_id"], body["member_id"]
        instance_id = body["group_instance_id"]
        session_timeout_ms = body["session_timeout_ms"]
        invalid = self.invalid_join(version, body)
        if invalid is not None:
            return invalid
        rebalance_timeout_ms = body["rebalance_timeout_ms"]
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms  # v0 has no rebalance timeout
        protocols = [(p["name"], bytes(p["metadata"])) for p in body["protocols"]]
        is_unknown = member_id == UNKNOWN_MEMBER_ID
        group = self.groups.get(group_id)
        if group is None:
            if not is_unknown:
                return join_error(version, Errors.UNKNOWN_MEMBER_ID, member_id)
            group = self.get_or_create_group(group_id)
        if not self._accept_joining_member(group, member_id):
            # Kafka only drops the id (a member, or a pending one): a member turned away is
            # never one awaiting its join, and the rebalance goes on at its own pace.
            group.remove(member_id)
            return join_error(version, Errors.GROUP_MAX_SIZE_REACHED)
        if group.is_in_state(GroupState.DEAD):
            return join_error(version, Errors.COORDINATOR_NOT_AVAILABLE, member_id)
        protocol_type = body["protocol_type"]
        if not group.supports_protocols(protocol_type, protocols):
            return join_error(version, Errors.INCONSISTENT_GROUP_PROTOCOL, member_id)
        request = _JoinRequest(client_id, client_host, instance_id, rebalance_timeout_ms, session_timeout_ms,
                               protocol_type, protocols, body.get("reason"))
        if is_unknown:
            return await self._join_new_member(version, group, request)
        return await self._join_existing_member(version, group, member_id, request)

    def _accept_joining_member(self, group: ClassicGroup, member_id: str) -> bool:
        max_size = self.config.max_size
        if group.is_in_state(GroupState.EMPTY, GroupState.DEAD):
            return True
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            member = group.members.get(member_id)
            return (member is not None and member.is_awaiting_join) or group.num_members_awaiting_join < max_size
        return group.has_member(member_id) or group.size < max_size

    async def _join_new_member(self, version: int, group: ClassicGroup, request: _JoinRequest) -> dict:
        prefix = request.instance_id if request.instance_id is not None else request.client_id
        new_member_id = f"{prefix}-{uuid.uuid4()}"
        if request.instance_id is not None:
            existing = group.static_member_id(request.instance_id)
            if existing is not None:
                return await self._update_static_member(version, group, existing, new_member_id, request)
            return await self._add_member_and_rebalance(version, group, new_member_id, request)
        if version >= 4:
            # KIP-394: the member must come back with this id; until then it is pending.
            group.pending_members.add(new_member_id)
            self._schedule_heartbeat(group, new_member_id, request.session_timeout_ms, is_pending=True)
            return join_error(version, Errors.MEMBER_ID_REQUIRED, new_member_id)
        return await self._add_member_and_rebalance(version, group, new_member_id, request)

    async def _join_existing_member(self, version: int, group: ClassicGroup, member_id: str,
                                    request: _JoinRequest) -> dict:
        if member_id in group.pending_members:
            return await self._add_member_and_rebalance(version, group, member_id, request)
        error = self._validate_existing_member(group, member_id, request.instance_id)
        if error != Errors.NONE:
            return join_error(version, error, member_id)
        member = group.members[member_id]
        if group.is_in_state(GroupState.COMPLETING_REBALANCE) and member.matches(request.protocols):
            # It may have missed the join answer: repeat it for the current generation.
            return self._join_answer(version, group, member)
        if group.is_in_state(GroupState.STABLE) and not group.is_leader(member_id) \
                and member.matches(request.protocols):
            return self._join_answer(version, group, member, with_members=False)
        future = asyncio.get_running_loop().create_future()
        group.update_member(member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms,
                            future)
        self._maybe_prepare_rebalance_or_complete_join(group, f"Updating metadata for member {member_id}")
        return await _answer(future)

    def _validate_existing_member(self, group: ClassicGroup, member_id: str, instance_id: str | None) -> Errors:
        if instance_id is None:
            return Errors.NONE if group.has_member(member_id) else Errors.UNKNOWN_MEMBER_ID
        existing = group.static_member_id(instance_id)
        if existing is None:
            return Errors.UNKNOWN_MEMBER_ID
        if existing != member_id:
            return Errors.FENCED_INSTANCE_ID
        return Errors.NONE

    def _join_answer(self, version: int, group: ClassicGroup, member: ClassicGroupMember,
                     with_members: bool = True) -> dict:
        members = group.current_members_for_leader() if with_members and group.is_leader(member.member_id) else []
        return {"error_code": Errors.NONE, "generation_id": group.generation_id,
                "protocol_type": group.protocol_type, "protocol_name": group.protocol_name,
                "leader": group.leader_id or "", "skip_assignment": False, "member_id": member.member_id,
                "members": members}

    async def _add_member_and_rebalance(self, version: int, group: ClassicGroup, member_id: str,
                                        request: _JoinRequest) -> dict:
        member = ClassicGroupMember(member_id, request.instance_id, request.client_id, request.client_host,
                                    request.rebalance_timeout_ms, request.session_timeout_ms,
                                    request.protocol_type, list(request.protocols), is_new=True)
        if group.is_in_state(GroupState.PREPARING_REBALANCE) and group.previous_state == GroupState.EMPTY:
            group.new_member_added = True  # the initial rebalance may wait a little longer
        future = asyncio.get_running_loop().create_future()
        group.add(member, future)
        # A new member cannot heartbeat before its join answer: bound its wait instead.
        self._schedule_heartbeat(group, member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance_or_complete_join(group, f"Adding new member {member_id}")
        return await _answer(future)

    async def _update_static_member(self, version: int, group: ClassicGroup, old_member_id: str,
                                    new_member_id: str, request: _JoinRequest) -> dict:
        """A known static member rejoined without its member id (GroupMetadataManager.
        updateStaticMemberThenRebalanceOrCompleteJoin): it takes the new id, and a Stable group
        whose selected protocol stays the same keeps its generation and assignment, whether the
        member led it or not (KIP-345); otherwise the group rebalances."""
        old = group.members[old_member_id]
        # The old incarnation is fenced: its parked answers end now.
        if old.is_awaiting_join:
            group.complete_join_future(old, join_error(version, Errors.FENCED_INSTANCE_ID, old_member_id))
        group.complete_sync_future(old, sync_answer(Errors.FENCED_INSTANCE_ID))
        self.heartbeat_purgatory.cancel_for_key(("heartbeat", group.group_id, old_member_id))
        current_leader = group.leader_id
        member = group.replace_static_member(request.instance_id, old_member_id, new_member_id)
        member.client_id, member.client_host = request.client_id, request.client_host
        previous = (member.supported_protocols, member.rebalance_timeout_ms, member.session_timeout_ms)
        future = asyncio.get_running_loop().create_future()
        group.update_member(member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms,
                            future)
        self._schedule_heartbeat(group, new_member_id, member.session_timeout_ms)
        if group.is_in_state(GroupState.STABLE):
            if group.protocol_name == group.select_protocol():
                logger.info("Static member which joins during Stable stage and doesn't affect the selected "
                            "protocol will not trigger a rebalance.")
                await self._keep_generation_for_static_member(version, group, member, old_member_id,
                                                              current_leader, previous)
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"Group's selectedProtocol will change because static member {new_member_id} with "
                           f"instance id {request.instance_id} joined with change of protocol")
        elif group.is_in_state(GroupState.COMPLETING_REBALANCE):
            # The old member id may already be in the leader's assignment: only a new
            # generation gives the new id its share.
            self.prepare_rebalance(group, f"Updating metadata for static member {new_member_id} with instance id "
                                          f"{request.instance_id}")
        else:
            self._maybe_prepare_rebalance_or_complete_join(group, f"Static member {request.instance_id} rejoined")
        return await _answer(future)

    async def _keep_generation_for_static_member(self, version: int, group: ClassicGroup,
                                                 member: ClassicGroupMember, old_member_id: str,
                                                 current_leader: str | None, previous: tuple) -> None:
        """Persist the static member's new id, then answer its join for the current generation:
        from JoinGroup v9 a returning leader is told so with skip_assignment (it keeps the
        assignment it made); before v9 it is named as the old leader id, so it syncs as a
        follower. A failed write puts the old member id back and answers with the error."""
        new_member_id = member.member_id
        try:
            await self._write_metadata(group, group.metadata_value())
        except GroupError as exc:
            future = member.join_future
            if future is None or future.done():
                return  # a rebalance meanwhile answered the join: the new id is the member's now
            logger.warning("Failed to persist metadata for group %s static member %s with group instance id %s "
                           "due to %s. Reverting to old member id %s.", group.group_id, new_member_id,
                           member.group_instance_id, Errors(exc.code).name, old_member_id)
            protocols, rebalance_timeout_ms, session_timeout_ms = previous
            group.update_member(member, protocols, rebalance_timeout_ms, session_timeout_ms, None)
            group.replace_static_member(member.group_instance_id, new_member_id, old_member_id)
            self.heartbeat_purgatory.cancel_for_key(("heartbeat", group.group_id, new_member_id))
            self._schedule_heartbeat(group, old_member_id, member.session_timeout_ms)
            future.set_result(join_error(version, exc.code))
            return
        if version >= 9:
            is_leader = group.is_leader(new_member_id)
            answer = self._join_answer(version, group, member, with_members=is_leader)
            answer["skip_assignment"] = is_leader
        else:
            answer = self._join_answer(version, group, member, with_members=False)
            answer["leader"] = current_leader or ""
        group.complete_join_future(member, answer)

    # -- rebalance -----------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in_state(GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY):
            self.prepare_rebalance(group, reason)
        elif group.is_in_state(GroupState.PREPARING_REBALANCE):
            self.join_purgatory.check_and_complete(("join", group.group_id))

    def prepare_rebalance(self, group: ClassicGroup, reason: str) -> None:
        if group.is_in_state(GroupState.COMPLETING_REBALANCE):
            self._reset_and_propagate_assignment_error(group, Errors.REBALANCE_IN_PROGRESS)
        self.heartbeat_purgatory.cancel_for_key(("sync", group.group_id))
        group.pending_sync_members.clear()
        if group.is_in_state(GroupState.EMPTY):
            delay_ms = self.config.initial_rebalance_delay_ms
            remaining_ms = max(group.max_rebalance_timeout_ms() - delay_ms, 0)
            operation: DelayedJoin = InitialDelayedJoin(self, group, delay_ms, remaining_ms)
        else:
            operation = DelayedJoin(self, group, group.max_rebalance_timeout_ms())
        logger.info("Preparing to rebalance group %s in state %s with old generation %d (reason: %s).",
                    group.group_id, group.state.value, group.generation_id, reason)
        group.transition_to(GroupState.PREPARING_REBALANCE, self._clock_ms())
        self.join_purgatory.try_complete_else_watch(operation, [("join", group.group_id)])

    def on_initial_join_delay_over(self, group: ClassicGroup, remaining_ms: int) -> None:
        if group.new_member_added and remaining_ms > 0 and group.is_in_state(GroupState.PREPARING_REBALANCE):
            group.new_member_added = False
            delay_ms = min(self.config.initial_rebalance_delay_ms, remaining_ms)
            later = InitialDelayedJoin(self, group, delay_ms,
                                       max(remaining_ms - self.config.initial_rebalance_delay_ms, 0))
            self.join_purgatory.try_complete_else_watch(later, [("join", group.group_id)])
            return
        self.on_complete_join(group)

    def on_complete_join(self, group: ClassicGroup) -> None:
        """The join phase ended: make the next generation and answer every parked join."""
        if not group.is_in_state(GroupState.PREPARING_REBALANCE):
            return  # the group died or moved on meanwhile
        for member in group.not_yet_rejoined_members():
            if not member.is_static:
                logger.info("Group %s removed dynamic member %s that did not rejoin", group.group_id,
                            member.member_id)
                self._remove_member(group, member)
        if not group.maybe_elect_new_joined_leader() and not group.is_empty:
            # Nobody rejoined: wait again until sessions time the silent members out.
            logger.info("Group %s could not complete rebalance because no members rejoined.", group.group_id)
            self.join_purgatory.try_complete_else_watch(
                DelayedJoin(self, group, group.max_rebalance_timeout_ms()), [("join", group.group_id)])
            return
        group.init_next_generation(self._clock_ms())
        if group.is_in_state(GroupState.EMPTY):
            logger.info("Group %s with generation %d is now empty.", group.group_id, group.generation_id)
            self._spawn(self._write_metadata(group, group.metadata_value()))
            return
        logger.info("Stabilized group %s generation %d with %d members.", group.group_id, group.generation_id,
                    group.size)
        for member in list(group.members.values()):
            answer = {"error_code": Errors.NONE, "generation_id": group.generation_id,
                      "protocol_type": group.protocol_type, "protocol_name": group.protocol_name,
                      "leader": group.leader_id, "skip_assignment": False, "member_id": member.member_id,
                      "members": group.current_members_for_leader() if group.is_leader(member.member_id) else []}
            group.complete_join_future(member, answer)
            member.is_new = False
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedSync(self, group, group.generation_id, group.max_rebalance_timeout_ms()),
            [("sync", group.group_id)])

    def on_sync_expired(self, group: ClassicGroup, generation_id: int) -> None:
        if generation_id != group.generation_id or not group.pending_sync_members \
                or not group.is_in_state(GroupState.COMPLETING_REBALANCE, GroupState.STABLE):
            return
        for member_id in list(group.pending_sync_members):
            member = group.members.get(member_id)
            if member is not None:
                logger.info("Group %s removed member %s that did not sync in time", group.group_id, member_id)
                self._remove_member(group, member)
        group.pending_sync_members.clear()
        self.prepare_rebalance(group, "Removing members who did not sync in time")

    def _reset_and_propagate_assignment_error(self, group: ClassicGroup, error: Errors) -> None:
        for member in list(group.members.values()):
            member.assignment = b""
            if member.is_awaiting_sync:
                group.complete_sync_future(member, sync_answer(error))
                # Its heartbeats were satisfied by the wait: the session counts again from now.
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    # -- sessions ------------------------------------------------------------------

    def reschedule_heartbeat(self, group: ClassicGroup, member) -> None:
        """A member's session starts again from now (rescheduleClassicGroupMemberHeartbeat)."""
        self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    def _schedule_heartbeat(self, group: ClassicGroup, member_id: str, timeout_ms: int,
                            is_pending: bool = False) -> None:
        """Complete the member's current session timer and start the next one."""
        key = ("heartbeat", group.group_id, member_id)
        member = group.members.get(member_id)
        if member is not None:
            member.heartbeat_satisfied = True
        self.heartbeat_purgatory.check_and_complete(key)
        if member is not None:
            member.heartbeat_satisfied = False
        self.heartbeat_purgatory.try_complete_else_watch(
            DelayedHeartbeat(self, group, member_id, is_pending, timeout_ms), [key])

    def heartbeat_satisfied(self, group: ClassicGroup, member_id: str, is_pending: bool) -> bool:
        if is_pending:
            return member_id not in group.pending_members
        member = group.members.get(member_id)
        if member is None or self.groups.get(group.group_id) is not group:
            return True  # nothing left to time out
        if member.is_new:
            return member.heartbeat_satisfied
        return member.is_awaiting_join or member.is_awaiting_sync or member.heartbeat_satisfied

    def on_heartbeat_expired(self, group: ClassicGroup, member_id: str, is_pending: bool) -> None:
        if self.heartbeat_satisfied(group, member_id, is_pending):
            return
        if is_pending:
            logger.info("Pending member %s in group %s has been removed after session timeout expiration.",
                        member_id, group.group_id)
            group.remove(member_id)
            self._complete_join_if_all_joined(group)
            return
        member = group.members[member_id]
        logger.info("Member %s in group %s has failed, removing it from the group", member_id, group.group_id)
        self._remove_member_and_update_group(group, member, "session timeout")

    def _remove_member(self, group: ClassicGroup, member: ClassicGroupMember) -> None:
        if member.is_awaiting_join:  # retried by a live consumer
            group.complete_join_future(member, join_error(9, Errors.UNKNOWN_MEMBER_ID))
        group.complete_sync_future(member, sync_answer(Errors.UNKNOWN_MEMBER_ID))
        self.heartbeat_purgatory.cancel_for_key(("heartbeat", group.group_id, member.member_id))
        group.remove(member.member_id)

    def _remove_member_and_update_group(self, group: ClassicGroup, member: ClassicGroupMember, reason: str) -> None:
        self._remove_member(group, member)
        if group.is_in_state(GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self.prepare_rebalance(group, f"removing member {member.member_id} on {reason}")
        else:
            self._complete_join_if_all_joined(group)

    def _complete_join_if_all_joined(self, group: ClassicGroup) -> None:
        """After a failed member left: a join phase whose remaining members have all joined ends
        now, the initial one included (unlike a join or a LeaveGroup, which wait it out)."""
        if group.is_in_state(GroupState.PREPARING_REBALANCE) and group.has_all_members_joined():
            self.join_purgatory.cancel_for_key(("join", group.group_id))
            self.on_complete_join(group)

    # -- SyncGroup -----------------------------------------------------------------

    async def sync_group(self, body: dict) -> dict:
        group = self.groups.get(body["group_id"])
        member_id = body["member_id"]
        if group is None:
            return sync_answer(Errors.UNKNOWN_MEMBER_ID)
        if group.is_in_state(GroupState.DEAD):
            return sync_answer(Errors.COORDINATOR_NOT_AVAILABLE)
        error = self._validate_existing_member(group, member_id, body["group_instance_id"])
        if error != Errors.NONE:
            return sync_answer(error)
        if body["generation_id"] != group.generation_id:
            return sync_answer(Errors.ILLEGAL_GENERATION)
        if _inconsistent(body["protocol_type"], group.protocol_type) \
                or _inconsistent(body["protocol_name"], group.protocol_name):
            return sync_answer(Errors.INCONSISTENT_GROUP_PROTOCOL)
        member = group.members[member_id]
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return sync_answer(Errors.REBALANCE_IN_PROGRESS)
        group.pending_sync_members.discard(member_id)
        self.heartbeat_purgatory.check_and_complete(("sync", group.group_id))
        if group.is_in_state(GroupState.STABLE):
            return sync_answer(Errors.NONE, member.assignment, group.protocol_type, group.protocol_name)
        assert group.is_in_state(GroupState.COMPLETING_REBALANCE)
        future = asyncio.get_running_loop().create_future()
        group.complete_sync_future(member, sync_answer(Errors.REBALANCE_IN_PROGRESS))
        member.sync_future = future
        if group.is_leader(member_id):
            assignment = {entry["member_id"]: bytes(entry["assignment"]) for entry in body["assignments"]}
            assignment = {mid: assignment.get(mid, b"") for mid in group.members}
            self._spawn(self._store_assignment(group, group.generation_id, assignment))
        return await _answer(future)

    async def _store_assignment(self, group: ClassicGroup, generation_id: int, assignment: dict[str, bytes]) -> None:
        error = Errors.NONE
        try:
            await self._write_metadata(group, group.metadata_value(assignment))
        except GroupError as exc:
            error = Errors(exc.code)
        if not group.is_in_state(GroupState.COMPLETING_REBALANCE) or group.generation_id != generation_id:
            return  # a rebalance started meanwhile; its members were told
        if error != Errors.NONE:
            self._reset_and_propagate_assignment_error(group, error)
            self._maybe_prepare_rebalance_or_complete_join(group, f"Error {error.name} when storing group assignment")
            return
        for member_id, member in group.members.items():
            member.assignment = assignment.get(member_id, b"")
        group.transition_to(GroupState.STABLE, self._clock_ms())
        self.metrics.classic_rebalances_completed += 1
        logger.info("Assignment received from leader %s for group %s for generation %d. The group has %d members.",
                    group.leader_id, group.group_id, group.generation_id, group.size)
        for member in list(group.members.values()):
            if member.is_awaiting_sync:
                group.complete_sync_future(member, sync_answer(Errors.NONE, member.assignment, group.protocol_type,
                                                                group.protocol_name))
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    # -- Heartbeat -----------------------------------------------------------------

    def heartbeat(self, body: dict) -> Errors:
        group = self.groups.get(body["group_id"])
        if group is None:
            return Errors.UNKNOWN_MEMBER_ID
        if group.is_in_state(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        member_id = body["member_id"]
        error = self._validate_existing_member(group, member_id, body["group_instance_id"])
        if error != Errors.NONE:
            return error
        if body["generation_id"] != group.generation_id:
            return Errors.ILLEGAL_GENERATION
        if group.is_in_state(GroupState.EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        member = group.members[member_id]
        self._schedule_heartbeat(group, member_id, member.session_timeout_ms)
        if group.is_in_state(GroupState.PREPARING_REBALANCE):
            return Errors.REBALANCE_IN_PROGRESS
        return Errors.NONE

    # -- LeaveGroup ----------------------------------------------------------------

    def leave_group(self, group_id: str, identities: list[dict]) -> tuple[Errors, list[dict]]:
        """(top-level error, one answer per member identity)."""
        group = self.groups.get(group_id)
        if group is None:  # Kafka answers each member, not the request
            return Errors.NONE, [{"member_id": identity["member_id"], "group_instance_id": identity.get(
                "group_instance_id"), "error_code": Errors.UNKNOWN_MEMBER_ID} for identity in identities]
        if group.is_in_state(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE, []
        answers = []
        left = []
        for identity in identities:
            member_id, instance_id = identity["member_id"], identity.get("group_instance_id")
            answer = {"member_id": member_id, "group_instance_id": instance_id, "error_code": Errors.NONE}
            answers.append(answer)
            if member_id == UNKNOWN_MEMBER_ID and instance_id is not None:
                member_id = group.static_member_id(instance_id) or ""
                if not member_id:
                    answer["error_code"] = Errors.UNKNOWN_MEMBER_ID
                    continue
            elif member_id in group.pending_members:
                group.remove(member_id)
                self.heartbeat_purgatory.cancel_for_key(("heartbeat", group.group_id, member_id))
                logger.info("Pending member %s has left group %s through explicit LeaveGroup", member_id, group_id)
                left.append(member_id)
                continue
            else:
                error = self._validate_existing_member(group, member_id, instance_id)
                if error != Errors.NONE:
                    answer["error_code"] = error
                    continue
            reason = identity.get("reason") or "the consumer is being closed"
            logger.info("Member %s has left group %s through explicit LeaveGroup; client reason: %s", member_id,
                        group_id, reason)
            self._remove_member(group, group.members[member_id])
            left.append(member_id)
        # Every member of the batch is gone before the group moves on, once (an Empty group stays).
        if left and not group.is_in_state(GroupState.EMPTY):
            self._maybe_prepare_rebalance_or_complete_join(
                group, f"explicit LeaveGroup request for ({', '.join(left)}) members")
        return Errors.NONE, answers

    # -- group lifecycle -------------------------------------------------------------

    def load_group(self, group: ClassicGroup) -> None:
        """A group read from the log: its members must heartbeat within their sessions."""
        old = self.groups.get(group.group_id)
        if old is not None:
            self.unload_group(old)
        self.groups[group.group_id] = group
        for member in group.members.values():
            self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)

    def unload_group(self, group: ClassicGroup) -> None:
        """Forget a group (deleted): it is Dead, parked requests are answered."""
        for member in list(group.members.values()):
            self.heartbeat_purgatory.cancel_for_key(("heartbeat", group.group_id, member.member_id))
            group.complete_join_future(member, join_error(9, Errors.COORDINATOR_NOT_AVAILABLE, member.member_id))
            group.complete_sync_future(member, sync_answer(Errors.COORDINATOR_NOT_AVAILABLE))
        self.join_purgatory.cancel_for_key(("join", group.group_id))
        self.heartbeat_purgatory.cancel_for_key(("sync", group.group_id))
        if not group.is_in_state(GroupState.DEAD):
            group.transition_to(GroupState.DEAD, self._clock_ms())
        if self.groups.get(group.group_id) is group:
            del self.groups[group.group_id]

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("Group metadata write failed", exc_info=task.exception())


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current


@dataclasses.dataclass(frozen=True)
class _JoinRequest:
    client_id: str
    client_host: str
    instance_id: str | None
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    reason: str | None
