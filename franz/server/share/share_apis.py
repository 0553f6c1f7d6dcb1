"""ShareFetch and ShareAcknowledge (KafkaApis.handleShareFetchRequest, handleShareAcknowledgeRequest).

Checks in Kafka's order: a group id (INVALID_REQUEST), a member id of 1-36
characters (INVALID_REQUEST), a renewal that asks for no records (v2), then the
share session (share_session_cache.py): its errors answer the whole request.
Acknowledgement batches are checked per partition (ascending, first <= last, one
type or one per offset, known types; renew only in a renewal), and a partition with
a bad batch gets INVALID_REQUEST. A ShareFetch's acknowledgements are applied
before its fetch, so records they release can be handed out in the same answer.

Answers: a session's first fetch names every partition it asked for; later ones
name the partitions with records, with an error, or new to the session. Records
are whole log batches; AcquiredRecords says which offsets in them are the
member's. AcquisitionLockTimeoutMs is the group's share.record.lock.duration.ms.
A final epoch (-1) fetches nothing and ends the session after the answer,
releasing the member's records. A full session cache answers
SHARE_SESSION_LIMIT_REACHED after MaxWaitMs, as Kafka delays it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from franz.coordinator.group.share_group import member_id_valid
from franz.protocol.errors import Errors
from franz.server.auth_helper import READ, AuthHelper
from franz.server.replica_manager import response_records, response_records_size
from franz.server.share.share_partition import ACK_RENEW
from franz.server.share.share_partition_manager import SharePartitionManager
from franz.server.standard_authorizer import ResourceType
from franz.server.share.share_session_cache import FINAL_EPOCH, INITIAL_EPOCH, ShareSessionError

logger = logging.getLogger(__name__)

ACK_TYPE_MAX_V1: Final = 3
RECORD_LIMIT_MODE: Final = 1  # ShareAcquireMode (v2): 0 batch-optimized, 1 record-limit


def _batches_valid(batches: list[dict], version: int, is_renew_ack: bool) -> bool:
    """KafkaApis.validateAcknowledgementBatches for one partition."""
    previous_end = -1
    max_type = ACK_RENEW if version >= 2 else ACK_TYPE_MAX_V1
    for batch in batches:
        first, last, types = batch["first_offset"], batch["last_offset"], batch["acknowledge_types"]
        if first > last or first < previous_end or not types:
            return False
        if len(types) > 1 and last - first != len(types) - 1:
            return False
        if any(t < 0 or t > max_type for t in types) or (ACK_RENEW in types and not is_renew_ack):
            return False
        previous_end = last
    return True


class ShareApis:
    def __init__(self, manager: SharePartitionManager, metadata) -> None:
        self.manager = manager
        self.metadata = metadata
        self.auth = AuthHelper()  # KafkaApis' checks once registered; every action allowed until then

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("ShareFetch", self.handle_share_fetch)
        apis.register("ShareAcknowledge", self.handle_share_acknowledge)

    # -- acknowledgements ----------------------------------------------------------------

    def _readable(self, request, topic_ids) -> set[str]:
        """The names of these topics the principal may READ (KafkaApis' filterByAuthorized)."""
        names = [name for topic_id in topic_ids if (name := self.metadata.name_of(topic_id)) is not None]
        return self.auth.filter_by_authorized(request, READ, ResourceType.TOPIC, names)

    async def _acknowledge(self, request, group_id: str, member_id: str, topics: list[dict], version: int,
                           is_renew_ack: bool) -> dict[tuple[bytes, int], tuple[int, str | None]]:
        """handleAcknowledgements: a partition of a topic the principal may not READ is answered
        TOPIC_AUTHORIZATION_FAILED, its acknowledgements not applied."""
        results: dict[tuple[bytes, int], tuple[int, str | None]] = {}
        wanted: dict[tuple[bytes, int], list[dict]] = {}
        readable = self._readable(request, [bytes(topic["topic_id"]) for topic in topics
                                            if any(p["acknowledgement_batches"] for p in topic["partitions"])])
        for topic in topics:
            topic_id = bytes(topic["topic_id"])
            name = self.metadata.name_of(topic_id)
            for partition in topic["partitions"]:
                key = (topic_id, partition["partition_index"])
                batches = partition["acknowledgement_batches"]
                if name is None:
                    results[key] = (Errors.UNKNOWN_TOPIC_ID, None)
                elif batches and name not in readable:
                    results[key] = (Errors.TOPIC_AUTHORIZATION_FAILED, None)
                elif not _batches_valid(batches, version, is_renew_ack):
                    results[key] = (Errors.INVALID_REQUEST, None)
                elif not self.metadata.has_partition(name, key[1]):
                    results[key] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
                elif not batches:
                    results[key] = (Errors.NONE, None)
                else:
                    wanted[key] = batches
        if wanted:
            results.update(await self.manager.acknowledge(group_id, member_id, wanted))
        return results

    # -- ShareFetch ----------------------------------------------------------------------

    def _fetch_error(self, code: int, message: str | None = None) -> dict:
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message,
                "acquisition_lock_timeout_ms": 0, "responses": [], "node_endpoints": []}

    async def handle_share_fetch(self, request, body: dict) -> dict:
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["share_session_epoch"]
        if group_id is None:
            return self._fetch_error(Errors.INVALID_REQUEST, "Invalid group id in the request.")
        # READ on the group, before any session is looked up
        if not self.auth.authorize(request, READ, ResourceType.GROUP, group_id):
            return self._fetch_error(Errors.GROUP_AUTHORIZATION_FAILED)
        if not member_id_valid(member_id):
            return self._fetch_error(Errors.INVALID_REQUEST, "Invalid member id in the request.")
        is_renew_ack = request.api_version >= 2 and body["is_renew_ack"]
        if is_renew_ack:
            nonzero = [name for name in ("max_bytes", "min_bytes", "max_records", "max_wait_ms") if body[name] != 0]
            if nonzero:
                return self._fetch_error(Errors.INVALID_REQUEST, ", ".join(
                    f"{_java_name(name)} must be set to 0" for name in nonzero) + " if isRenewAck is true.")
        requested = [(bytes(t["topic_id"]), p["partition_index"]) for t in body["topics"] for p in t["partitions"]]
        has_acks = any(p["acknowledgement_batches"] for t in body["topics"] for p in t["partitions"])
        forgotten = [(bytes(t["topic_id"]), p) for t in body["forgotten_topics_data"] for p in t["partitions"]]
        sessions = self.manager.sessions
        key = (group_id, member_id)
        try:
            if epoch == FINAL_EPOCH:
                session = sessions.find(key, epoch)
                initial = False
            elif epoch == INITIAL_EPOCH:
                if has_acks:
                    return self._fetch_error(Errors.INVALID_REQUEST, "Acknowledge data present in initial "
                                                                     "epoch share fetch request.")
                try:
                    session = sessions.open(key, requested, request.connection_id)
                except ShareSessionError as exc:
                    await asyncio.sleep(max(body["max_wait_ms"], 0) / 1000)
                    return self._fetch_error(exc.code)
                initial = True
            else:
                session = sessions.find(key, epoch)
                session.update(requested, forgotten)
                sessions.advance(session)
                initial = False
        except ShareSessionError as exc:
            return self._fetch_error(exc.code)
        acks = {}
        if has_acks:
            acks = await self._acknowledge(request, group_id, member_id, body["topics"], request.api_version,
                                           is_renew_ack)
        partitions: dict[tuple[bytes, int], dict] = {}
        if epoch != FINAL_EPOCH and not is_renew_ack:
            wanted = requested if initial else list(session.partitions)
            fetchable = []
            # READ on each topic, every fetch (a share session keeps no grant), before its partition
            readable = self._readable(request, {topic_id for topic_id, _ in wanted})
            for topic_partition in wanted:
                name = self.metadata.name_of(topic_partition[0])
                if name is None:
                    partitions[topic_partition] = _partition_answer(topic_partition[1], Errors.UNKNOWN_TOPIC_ID)
                elif name not in readable:
                    partitions[topic_partition] = _partition_answer(topic_partition[1],
                                                                    Errors.TOPIC_AUTHORIZATION_FAILED)
                elif not self.metadata.has_partition(name, topic_partition[1]):
                    partitions[topic_partition] = _partition_answer(topic_partition[1],
                                                                    Errors.UNKNOWN_TOPIC_OR_PARTITION)
                else:
                    fetchable.append(topic_partition)
            fetched = await self.manager.fetch(group_id, member_id, fetchable, epoch,
                                               body["max_records"], body["batch_size"], body["max_bytes"],
                                               body["min_bytes"], body["max_wait_ms"],
                                               record_limit=body["share_acquire_mode"] == RECORD_LIMIT_MODE)
            for topic_partition, (code, acquired) in fetched.items():
                answer = _partition_answer(topic_partition[1], code)
                if acquired is not None:
                    answer["records"] = response_records(acquired.records)
                    answer["acquired_records"] = acquired.ranges
                partitions[topic_partition] = answer
            if not initial:  # only what changed: records, errors, partitions new to the session
                for topic_partition, answer in list(partitions.items()):
                    needs_update = session.partitions.get(topic_partition, False)
                    if answer["error_code"] != Errors.NONE:
                        session.partitions[topic_partition] = True
                    elif answer["acquired_records"] or needs_update:
                        if topic_partition in session.partitions:
                            session.partitions[topic_partition] = False
                    else:
                        del partitions[topic_partition]
            for topic_partition, answer in partitions.items():  # those with records go to the back
                if answer["acquired_records"] and topic_partition in session.partitions:
                    session.partitions[topic_partition] = session.partitions.pop(topic_partition)
        for topic_partition, (code, message) in acks.items():
            answer = partitions.setdefault(topic_partition, _partition_answer(topic_partition[1], Errors.NONE))
            answer["acknowledge_error_code"], answer["acknowledge_error_message"] = code, message
        if epoch == FINAL_EPOCH:
            await self.manager.release_session(group_id, member_id)
        bytes_out: dict[str, int] = {}  # BytesOutPerSec: what the answer carries, 0 included (KafkaApis)
        for (topic_id, _index), answer in partitions.items():
            if (name := self.metadata.name_of(topic_id)) is not None:
                bytes_out[name] = bytes_out.get(name, 0) + response_records_size(answer["records"])
        self.manager.replica_manager.broker_topic_stats.mark_topics("BytesOutPerSec", bytes_out)
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None,
                "acquisition_lock_timeout_ms": self.manager.record_lock_duration_ms(group_id),
                "responses": _by_topic(partitions), "node_endpoints": []}

    # -- ShareAcknowledge ----------------------------------------------------------------

    async def handle_share_acknowledge(self, request, body: dict) -> dict:
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["share_session_epoch"]

        def error(code: int, message: str | None = None) -> dict:
            return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "responses": [],
                    "node_endpoints": []}
        if group_id is None:
            return error(Errors.INVALID_REQUEST, "Invalid group id in the request.")
        if not self.auth.authorize(request, READ, ResourceType.GROUP, group_id):
            return error(Errors.GROUP_AUTHORIZATION_FAILED)
        if not member_id_valid(member_id):
            return error(Errors.INVALID_REQUEST, "Invalid member id in the request.")
        sessions = self.manager.sessions
        if epoch == INITIAL_EPOCH:
            return error(Errors.INVALID_SHARE_SESSION_EPOCH)
        try:
            session = sessions.find((group_id, member_id), epoch)
        except ShareSessionError as exc:
            return error(exc.code)
        if epoch != FINAL_EPOCH:
            sessions.advance(session)
        is_renew_ack = request.api_version >= 2 and body["is_renew_ack"]
        acks = await self._acknowledge(request, group_id, member_id, body["topics"], request.api_version,
                                       is_renew_ack)
        if epoch == FINAL_EPOCH:
            await self.manager.release_session(group_id, member_id)
        by_topic: dict[bytes, list[dict]] = {}
        for (topic_id, partition), (code, message) in acks.items():
            by_topic.setdefault(topic_id, []).append({"partition_index": partition, "error_code": code,
                                                      "error_message": message,
                                                      "current_leader": {"leader_id": 0, "leader_epoch": 0}})
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None,
                "acquisition_lock_timeout_ms": self.manager.record_lock_duration_ms(group_id),
                "responses": [{"topic_id": topic_id, "partitions": answers} for topic_id, answers in by_topic.items()],
                "node_endpoints": []}


def _partition_answer(partition: int, code: int) -> dict:
    return {"partition_index": partition, "error_code": code, "error_message": None,
            "acknowledge_error_code": Errors.NONE, "acknowledge_error_message": None,
            "current_leader": {"leader_id": 0, "leader_epoch": 0}, "records": b"", "acquired_records": []}


def _by_topic(partitions: dict[tuple[bytes, int], dict]) -> list[dict]:
    topics: dict[bytes, list[dict]] = {}
    for (topic_id, _), answer in partitions.items():
        topics.setdefault(topic_id, []).append(answer)
    return [{"topic_id": topic_id, "partitions": answers} for topic_id, answers in topics.items()]


def _java_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
