"""The group coordinator's door: its APIs, `__consumer_offsets`, loading and expiration (GroupCoordinatorService).

Owns the request handlers of FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, ConsumerGroupHeartbeat, ConsumerGroupDescribe, OffsetCommit,
TxnOffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups and
OffsetDelete (`register(apis)` adds them to KafkaApis), the internal topic
(created compacted with offsets.topic.num.partitions partitions on the first
FindCoordinator for a group, or the first write), the load of every group and
offset from that topic at startup (group_coordinator_shard.py; clean stop or
SIGKILL alike: the log is the truth), and the expiration of offsets every
offsets.retention.check.interval.ms. Classic groups are the GroupCoordinator's,
KIP-848 groups the ConsumerGroupCoordinator's; a group id belongs to one kind at
a time, and a non-empty group moves between them as KIP-848's online migration
moves it (group_migration.py): classic requests to a consumer group go to the
ConsumerGroupCoordinator, which serves its classic members.

Invariant: in-memory offsets change only by replaying records after their
append returned (OffsetMetadataManager.replay), so what a client was told is
committed is what a restart loads back. Offsets of a transaction
(TxnOffsetCommit) are written as one transactional batch of the producer and
stay pending until the transaction coordinator writes that producer's marker
into the group's partition (`on_transaction_marker`): COMMIT makes them
committed, ABORT drops them; a load replays the markers the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from franz.common.utils import java_hash_map_order, java_topic_partition_hash
from franz.coordinator.group import consumer_protocol, group_migration
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.coordinator_loader import (
    OFFSETS_TOPIC,
    CoordinatorPartitionWriter,
    CoordinatorWriteError,
)
from franz.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupState
from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupConfig, ConsumerGroupCoordinator
from franz.coordinator.group.group_coordinator import (
    UNKNOWN_MEMBER_ID, GroupConfig, GroupCoordinator, join_error, sync_answer,
)
from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics
from franz.coordinator.group.group_coordinator_shard import read_partitions, replay
from franz.coordinator.group.group_metadata import ClassicGroup, GroupError, GroupState
from franz.coordinator.group.offset_metadata_manager import OffsetMetadataManager
from franz.coordinator.group.share_group_coordinator import ShareGroupConfig, ShareGroupCoordinator
from franz.coordinator.group.streams.streams_group import StreamsGroup
from franz.coordinator.group.streams.streams_group_coordinator import (
    StreamsGroupConfig, StreamsGroupCoordinator, described_group_error, error_answer,
)
from franz.coordinator.group.streams.topics.topic_configuration_exception import Status
from franz.protocol.api_keys import AUTHORIZED_OPERATIONS_OMITTED, SCHEMAS_BY_NAME
from franz.protocol.errors import Errors, default_message
from franz.records import CompressionType
from franz.records.builder import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, now_ms
from franz.server.auth_helper import (
    CLUSTER_ACTION, CLUSTER_NAME, CREATE, DELETE, DESCRIBE, READ, WRITE, AuthHelper,
)
from franz.server.auto_topic_creation_manager import AutoTopicCreationManager
from franz.server.metadata_cache import INTERNAL_TOPICS, InvalidTopicError, validate_topic_name
from franz.server.standard_authorizer import ResourceType
from franz.server.controller import ApiError
from franz.server.error_responses import error_response, refusal_response
from franz.storage.producer_append_info import VerificationGuard

logger = logging.getLogger(__name__)

_FIND_COORDINATOR: Final = SCHEMAS_BY_NAME["FindCoordinator"].api_key
_OFFSET_FETCH: Final = SCHEMAS_BY_NAME["OffsetFetch"].api_key
# OffsetCommitRequest.DEFAULT_RETENTION_TIME: the offsets.retention.minutes of the broker.
DEFAULT_RETENTION_TIME_MS: Final = -1

KEY_TYPE_GROUP: Final = 0
KEY_TYPE_TRANSACTION: Final = 1
KEY_TYPE_SHARE: Final = 2
GROUP_TYPE_CLASSIC: Final = "classic"
GROUP_TYPE_CONSUMER: Final = "consumer"
GROUP_TYPE_SHARE: Final = "share"
GROUP_TYPE_STREAMS: Final = "streams"
# how many failed internal topic creations a streams member is told of by name (KafkaApis)
_MAX_CREATION_ERRORS_TOLD: Final = 3
# OffsetCommit and OffsetFetch name topics by id from v10 (the Java 4.x consumer's, in KIP-848 groups).
OFFSETS_BY_TOPIC_ID_MIN_VERSION: Final = 10

# key -> (error, node id, host, port); other coordinators (transactions, shares) add theirs.
CoordinatorResolver = Callable[[str, Any], tuple[int, int, str, int]]
# (transactional id, producer id, producer epoch, offsets partition) -> the error, NONE when
# that partition is in the producer's ongoing transaction (the transaction coordinator's check)
TransactionVerifier = Callable[[str, int, int, int, int], Awaitable[Errors]]


class GroupCoordinatorService:
    def __init__(self, config, controller, replica_manager, metadata,
                 clock_ms: Callable[[], int] = now_ms, group_configs=None, share_coordinator=None) -> None:
        self.config = GroupConfig.from_kafka_config(config)
        self.kafka_config = config
        self.controller = controller
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.writer = CoordinatorPartitionWriter(
            replica_manager, compression=CompressionType(config["offsets.topic.compression.codec"]))
        self.metrics = GroupCoordinatorMetrics()
        self.metrics.service = self
        self.coordinator = GroupCoordinator(self.config, self._write_group_metadata, clock_ms, self.metrics)
        self.offsets = OffsetMetadataManager()
        # KIP-848 groups, served when group.coordinator.rebalance.protocols has "consumer"
        self.consumer_groups: ConsumerGroupCoordinator | None = None
        if GROUP_TYPE_CONSUMER in config["group.coordinator.rebalance.protocols"]:
            self.consumer_groups = ConsumerGroupCoordinator(ConsumerGroupConfig.from_kafka_config(config),
                                                            self._topics_view, self._claim_for_consumer_group,
                                                            self._append, group_configs,
                                                            self._hand_back_to_classic_group, self.metrics, clock_ms,
                                                            functools.partial(self._held_by_another_kind,
                                                                              kind=GROUP_TYPE_CONSUMER))
        # KIP-932 share groups, with the share coordinator that keeps their partitions' state
        self.share_groups: ShareGroupCoordinator | None = None
        if share_coordinator is not None:
            self.share_groups = ShareGroupCoordinator(ShareGroupConfig.from_kafka_config(config), self._topics_view,
                                                      self._append, share_coordinator,
                                                      functools.partial(self._held_by_another_kind,
                                                                        kind=GROUP_TYPE_SHARE),
                                                      group_configs, clock_ms,
                                                      self.metrics)
        # KIP-1071 streams groups. Their APIs are always there, as Kafka 4.3 advertises them, and
        # answer UNSUPPORTED_VERSION unless group.coordinator.rebalance.protocols has "streams"
        # (and streams.version is finalized: KafkaApis' feature gate).
        self.streams_groups = StreamsGroupCoordinator(StreamsGroupConfig.from_kafka_config(config),
                                                      self._topics_view, self._claim_for_streams_group,
                                                      self._append, group_configs, self.metrics, clock_ms,
                                                      functools.partial(self._held_by_another_kind,
                                                                        kind=GROUP_TYPE_STREAMS))
        self._streams_enabled = GROUP_TYPE_STREAMS in config["group.coordinator.rebalance.protocols"]
        self.topic_creation = AutoTopicCreationManager(controller, clock_ms)
        self._clock_ms = clock_ms
        self._loading = False  # __consumer_offsets is being read back at startup
        self._expiration_task: asyncio.Task | None = None
        self.resolvers: dict[int, CoordinatorResolver] = {KEY_TYPE_GROUP: self._resolve_group_coordinator}
        self.transaction_verifier: TransactionVerifier | None = None  # set by the transaction coordinator
        self.auth = AuthHelper()  # KafkaApis' checks once registered; every action allowed until then

    # -- lifecycle -----------------------------------------------------------------

    async def startup(self) -> None:
        """Load every group and offset from `__consumer_offsets`, then start the timers."""
        topic = self.metadata.get(OFFSETS_TOPIC)
        entries = []
        self._loading = True
        try:
            if topic is not None:
                logs = [(p, self.replica_manager.log_of((OFFSETS_TOPIC, p))) for p in range(topic.num_partitions)]
                entries = await asyncio.get_running_loop().run_in_executor(None, read_partitions, logs)
            self.coordinator.startup()
            loaded = replay(entries, self.offsets, self.coordinator, self.consumer_groups, self._clock_ms(),
                            self.share_groups, self.streams_groups)
        finally:
            self._loading = False
        if self.share_groups is not None:
            self.share_groups.start_sessions()
        if loaded:
            logger.info("Loaded %d groups and the offsets of %d groups from %s", loaded,
                        len(self.offsets.offsets), OFFSETS_TOPIC)
        self._expiration_task = asyncio.get_running_loop().create_task(self._expire_periodically())

    async def shutdown(self) -> None:
        task, self._expiration_task = self._expiration_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.coordinator.shutdown()
        if self.consumer_groups is not None:
            await self.consumer_groups.shutdown()
        if self.share_groups is not None:
            await self.share_groups.shutdown()
        await self.streams_groups.shutdown()
        await self.topic_creation.close()

    def partition_states(self) -> dict[str, int]:
        """The coordinator runtime's partitions by state: every __consumer_offsets partition of
        this one node, loading until startup has read them all back, then active (a load that
        fails, fails the broker's startup)."""
        topic = self.metadata.get(OFFSETS_TOPIC)
        if topic is None:
            return {}
        return {"loading" if self._loading else "active": topic.num_partitions}

    def register(self, apis) -> None:
        self.auth = apis.auth
        # The APIs that name one group (OffsetFetch: below v8): KafkaApis authorizes the group
        # before the coordinator sees the request, so a resigned partition is only told to
        # principals that may act on the group.
        def one_group(handler, operation: int = READ):
            return self._authorizing_group(self._unless_resigned(handler), operation)
        for name, handler in (("FindCoordinator", self.handle_find_coordinator),
                              ("JoinGroup", one_group(self.handle_join_group)),
                              ("SyncGroup", self._authorizing_sync(self._unless_resigned(self.handle_sync_group))),
                              ("Heartbeat", one_group(self.handle_heartbeat)),
                              ("LeaveGroup", one_group(self.handle_leave_group)),
                              ("OffsetCommit", one_group(self.handle_offset_commit)),
                              ("OffsetFetch", one_group(self.handle_offset_fetch, DESCRIBE)),
                              ("TxnOffsetCommit", self._authorizing_txn_offset_commit(
                                  self._unless_resigned(self.handle_txn_offset_commit))),
                              ("ListGroups", self.handle_list_groups), ("DescribeGroups", self.handle_describe_groups),
                              ("DeleteGroups", self.handle_delete_groups),
                              ("OffsetDelete", one_group(self.handle_offset_delete, DELETE))):
            apis.register(name, handler)
        apis.internal_topic_creators[OFFSETS_TOPIC] = self.ensure_offsets_topic
        if self.consumer_groups is not None:
            apis.register("ConsumerGroupHeartbeat", one_group(self.handle_consumer_group_heartbeat))
            apis.register("ConsumerGroupDescribe", self.handle_consumer_group_describe)
        if self.share_groups is not None:
            apis.register("ShareGroupHeartbeat", one_group(self.handle_share_group_heartbeat))
            apis.register("ShareGroupDescribe", self.handle_share_group_describe)
            apis.register("DescribeShareGroupOffsets", self.handle_describe_share_group_offsets)
            apis.register("AlterShareGroupOffsets", one_group(self.handle_alter_share_group_offsets))
            apis.register("DeleteShareGroupOffsets", one_group(self.handle_delete_share_group_offsets, DELETE))
        apis.register("StreamsGroupHeartbeat", self._if_streams_enabled(one_group(self.handle_streams_group_heartbeat)))
        apis.register("StreamsGroupDescribe", self._if_streams_enabled(self.handle_streams_group_describe))

    # -- authorization (KafkaApis' checks before the coordinator) ---------------------------

    def _authorizing_group(self, handler, operation: int):
        """`handler` of an API naming one group, refused with the API's error response
        (GROUP_AUTHORIZATION_FAILED) unless the principal may do `operation` on the group.
        OffsetFetch from v8 names several groups and checks each itself."""
        async def handle(request, body: dict) -> dict:
            several = request.api_key == _OFFSET_FETCH and request.api_version >= 8
            if not several and not self.auth.authorize(request, operation, ResourceType.GROUP,
                                                              body["group_id"]):
                if request.api_key == _OFFSET_FETCH:  # OffsetFetchResponse of the one group: no topics
                    return {"throttle_time_ms": 0, "error_code": Errors.GROUP_AUTHORIZATION_FAILED, "topics": []}
                return refusal_response(request, body, Errors.GROUP_AUTHORIZATION_FAILED)
            return await handler(request, body)
        return handle

    def _if_streams_enabled(self, handler):
        """KafkaApis.isStreamsGroupProtocolEnabled: without "streams" in the rebalance protocols, the
        streams group APIs answer UNSUPPORTED_VERSION before anything else."""
        async def handle(request, body: dict) -> dict:
            if not self._streams_enabled:
                return refusal_response(request, body, Errors.UNSUPPORTED_VERSION)
            return await handler(request, body)
        return handle

    def _authorizing_sync(self, handler):
        """SyncGroup: Kafka refuses a v5+ request without protocol type and name first, then
        authorizes READ on the group."""
        async def handle(request, body: dict) -> dict:
            if request.api_version >= 5 and (body["protocol_type"] is None or body["protocol_name"] is None):
                return {"throttle_time_ms": 0, **sync_answer(Errors.INCONSISTENT_GROUP_PROTOCOL)}
            if not self.auth.authorize(request, READ, ResourceType.GROUP, body["group_id"]):
                return refusal_response(request, body, Errors.GROUP_AUTHORIZATION_FAILED)
            return await handler(request, body)
        return handle

    def _authorizing_txn_offset_commit(self, handler):
        """TxnOffsetCommit: WRITE on the transactional id, then READ on the group (the producer
        id is not checked: the transactional id's authorization implies it)."""
        async def handle(request, body: dict) -> dict:
            if not self.auth.authorize(request, WRITE, ResourceType.TRANSACTIONAL_ID, body["transactional_id"]):
                return refusal_response(request, body, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            if not self.auth.authorize(request, READ, ResourceType.GROUP, body["group_id"]):
                return refusal_response(request, body, Errors.GROUP_AUTHORIZATION_FAILED)
            return await handler(request, body)
        return handle

    def _split_topics_by_read(self, request, topics: list[dict]) -> tuple[list[dict], list[dict]]:
        """OffsetCommit, TxnOffsetCommit and OffsetDelete: the topics the principal may READ,
        and the answers of the others (every partition TOPIC_AUTHORIZATION_FAILED, whether or not
        the topic exists)."""
        allowed = self.auth.filter_by_authorized(request, READ, ResourceType.TOPIC, [t["name"] for t in topics])
        authorized, refused = [], []
        for topic in topics:
            if topic["name"] in allowed:
                authorized.append(topic)
            else:
                refused.append({"name": topic["name"], "topic_id": topic.get("topic_id"), "partitions": [
                    {"partition_index": p["partition_index"], "error_code": Errors.TOPIC_AUTHORIZATION_FAILED}
                    for p in topic["partitions"]]})
        return authorized, refused

    def _fetched_offsets(self, request, group_id: str, asked: list[dict] | None, stable: bool) -> list[dict]:
        """KafkaApis.fetchOffsetsForGroup / fetchAllOffsetsForGroup: asked topics the principal
        may not DESCRIBE are answered TOPIC_AUTHORIZATION_FAILED, never read; of all the group's
        offsets, only those of topics it may DESCRIBE are shown."""
        if asked is None:
            topics = self.offsets.fetch(group_id, None, stable)
            allowed = self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC,
                                                     [t["name"] for t in topics])
            return [t for t in topics if t["name"] in allowed]
        allowed = self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC, [t["name"] for t in asked])
        topics = self.offsets.fetch(group_id, [t for t in asked if t["name"] in allowed], stable)
        for topic in asked:
            if topic["name"] not in allowed:
                topics.append({"name": topic["name"], "partitions": [
                    {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1,
                     "metadata": "", "error_code": Errors.TOPIC_AUTHORIZATION_FAILED}
                    for index in topic["partition_indexes"]]})
        return topics

    def _described_groups(self, request, group_ids: list[str]) -> tuple[list[str], list[str]]:
        """The describe APIs: the groups the principal may DESCRIBE, and the others."""
        authorized, refused = [], []
        for group_id in group_ids:
            allowed = self.auth.authorize(request, DESCRIBE, ResourceType.GROUP, group_id)
            (authorized if allowed else refused).append(group_id)
        return authorized, refused

    def _add_authorized_operations(self, request, answers: list[dict]) -> None:
        """KafkaApis' describe handlers: a group answered without error gets the operations the
        principal may do on it."""
        for answer in answers:
            if answer["error_code"] == Errors.NONE:
                answer["authorized_operations"] = self.auth.authorized_operations(request, "group",
                                                                                  answer["group_id"])

    def _resigned(self, group_id: str) -> bool:
        """Whether the group's __consumer_offsets partition is offline (a disk error took its log
        offline): Kafka's coordinator resigns a partition it no longer leads, and its groups are
        then answered NOT_COORDINATOR (CoordinatorRuntime: the shard is not loaded) and left out
        of ListGroups. Their state stays here until a restart reads it back from the log."""
        offline = self.metadata.offline_partitions
        return bool(offline) and (OFFSETS_TOPIC, self.partition_for(group_id)) in offline

    def _unless_resigned(self, handler):
        """`handler` of an API naming one group, answered with the API's error response
        (NOT_COORDINATOR) while that group's partition is resigned."""
        async def handle(request, body: dict) -> dict:
            group_id = body.get("group_id")
            if group_id and self._resigned(group_id):
                return {"throttle_time_ms": 0, **error_response(request.api_key, request.api_version, body,
                                                                ApiError(Errors.NOT_COORDINATOR))}
            return await handler(request, body)
        return handle

    # -- the internal topic ------------------------------------------------------------

    def _offsets_topic_configs(self) -> dict[str, str]:
        return {"cleanup.policy": "compact", "compression.type": "producer",
                "segment.bytes": str(self.kafka_config["offsets.topic.segment.bytes"])}

    async def ensure_offsets_topic(self) -> None:
        if self.metadata.get(OFFSETS_TOPIC) is None:
            await self.controller.create_topic(OFFSETS_TOPIC, self.config.offsets_topic_num_partitions,
                                               self._offsets_topic_configs())

    def partition_for(self, group_id: str) -> int:
        """The group's __consumer_offsets partition, over the topic's own partition count once it
        exists (Kafka's coordinators take metadataCache.numPartitions, else the config): an
        offsets.topic.num.partitions changed after the topic was made must not move groups."""
        return serde.partition_for(group_id, self.metadata.partition_count(
            OFFSETS_TOPIC, self.config.offsets_topic_num_partitions))

    async def _append(self, group_id: str, entries: list[tuple[bytes, bytes | None]],
                      producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                      verification_guard: VerificationGuard = VerificationGuard.SENTINEL) -> int:
        """Write the records (as a transaction's batch with a producer id); the offset after them."""
        await self.ensure_offsets_topic()
        try:
            return await self.writer.append(self.partition_for(group_id), entries, producer_id, producer_epoch,
                                            verification_guard)
        except CoordinatorWriteError as exc:
            logger.error("Could not write %d records of group %s: %s", len(entries), group_id, exc)
            raise GroupError(exc.code, str(exc)) from None

    async def _write_group_metadata(self, group: ClassicGroup, value: dict | None) -> None:
        encoded = None if value is None else serde.group_metadata_value(value)
        await self._append(group.group_id, [(serde.group_metadata_key(group.group_id), encoded)])

    # -- FindCoordinator -------------------------------------------------------------

    def _resolve_group_coordinator(self, key: str, request) -> tuple[int, int, str, int]:
        return self.controller.find_coordinator(OFFSETS_TOPIC, self.partition_for(key),
                                                self.config.offsets_topic_num_partitions,
                                                self._offsets_topic_configs(), request.listener_name)

    async def handle_find_coordinator(self, request, body: dict) -> dict:
        """KafkaApis.handleFindCoordinatorRequest. Below v4 one key, and the answer's message is
        Errors.message() of its code ("NONE" when found); an error goes out as the request's error
        response (no node, no throttle). From v4 each key has its own code and no message. An
        unknown key type fails the whole request (CoordinatorType.forId throws)."""
        version = request.api_version
        key_type = body["key_type"] if version >= 1 else KEY_TYPE_GROUP
        keys = body["coordinator_keys"] if version >= 4 else [body["key"]]
        if key_type not in (KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION, KEY_TYPE_SHARE):
            logger.error("Unknown coordinator type received: %d", key_type)
            refusal = ApiError(Errors.INVALID_REQUEST, f"Unknown coordinator type received: {key_type}")
            return {"throttle_time_ms": 0, **error_response(_FIND_COORDINATOR, version, body, refusal)}
        if key_type == KEY_TYPE_SHARE and version >= 6 and keys and not self.auth.authorize_cluster(
                request, CLUSTER_ACTION):
            # getCoordinator's authorizeClusterOperation throws: the whole request fails
            refused = Errors.CLUSTER_AUTHORIZATION_FAILED
            refusal = ApiError(refused, default_message(refused))
            return {"throttle_time_ms": 0, **error_response(_FIND_COORDINATOR, version, body, refusal)}
        answers = []
        for key in keys:
            resolver = self.resolvers.get(key_type)
            refused = self._refused_coordinator_key(request, key_type, key)
            if refused is not None:
                code, node_id, host, port = refused, -1, "", -1
            else:
                code, node_id, host, port = ((Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1) if resolver is None
                                             else resolver(key, request))
            answers.append({"key": key, "error_code": code, "error_message": None, "node_id": node_id,
                            "host": host, "port": port})
        if version >= 4:
            return {"throttle_time_ms": 0, "coordinators": answers}
        answer = answers[0]
        if answer["error_code"] != Errors.NONE:
            refusal = ApiError(Errors(answer["error_code"]))
            return {"throttle_time_ms": 0, **error_response(_FIND_COORDINATOR, version, body, refusal)}
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": default_message(Errors.NONE),
                "node_id": answer["node_id"], "host": answer["host"], "port": answer["port"]}

    def _refused_coordinator_key(self, request, key_type: int, key: str) -> Errors | None:
        """getCoordinator: DESCRIBE on the group or the transactional id the key names, before
        its coordinator is looked up (or its internal topic created)."""
        if key_type == KEY_TYPE_GROUP and not self.auth.authorize(request, DESCRIBE, ResourceType.GROUP, key):
            return Errors.GROUP_AUTHORIZATION_FAILED
        if key_type == KEY_TYPE_TRANSACTION and not self.auth.authorize(request, DESCRIBE,
                                                                        ResourceType.TRANSACTIONAL_ID, key):
            return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        return None

    # -- the classic protocol ------------------------------------------------------------

    async def handle_join_group(self, request, body: dict) -> dict:
        client_host = "/" + request.client_address[0]
        version, client_id = request.api_version, request.client_id or ""
        if version == 0:  # no rebalance timeout in v0: the session timeout stands in (JoinGroupRequest)
            body = {**body, "rebalance_timeout_ms": body["session_timeout_ms"]}
        streams_group = self._streams_group(body["group_id"])
        if self._share_group(body["group_id"]) is not None or (streams_group is not None and streams_group.members):
            # classicGroupJoin: not a classic group, nor one it may take the id of; the answer
            # names no member
            return {**join_error(version, Errors.INCONSISTENT_GROUP_PROTOCOL), "throttle_time_ms": 0}
        if streams_group is not None:
            try:
                await self.streams_groups.delete_group(body["group_id"])  # an empty one gives its id up
            except GroupError as exc:
                return {**join_error(version, exc.code, body["member_id"]), "throttle_time_ms": 0}
        consumer_group = self._consumer_group(body["group_id"])
        if consumer_group is not None and consumer_group.members:
            # A classic member joins a consumer group (online migration).
            answer = self.coordinator.invalid_join(version, body)
            if answer is None:
                answer = await self.consumer_groups.classic_join(version, client_id, client_host, body)
        else:
            if consumer_group is not None:
                try:
                    await self.consumer_groups.delete_group(body["group_id"])  # an empty one gives its id up
                except GroupError as exc:
                    return {**join_error(version, exc.code, body["member_id"]), "throttle_time_ms": 0}
            answer = await self.coordinator.join_group(version, client_id, client_host, body)
        answer["throttle_time_ms"] = 0
        # A parked join may be answered by code that does not know its version
        # (JoinGroupResponse's constructor): before v7 the protocol name is not nullable.
        if request.api_version < 7 and answer["protocol_name"] is None:
            answer["protocol_name"] = ""
        elif request.api_version >= 7 and answer["protocol_name"] == "":
            answer["protocol_name"] = None
        return answer

    async def handle_sync_group(self, request, body: dict) -> dict:
        if request.api_version >= 5 and (body["protocol_type"] is None or body["protocol_name"] is None):
            return {"throttle_time_ms": 0, **sync_answer(Errors.INCONSISTENT_GROUP_PROTOCOL)}  # mandatory from v5
        if not body["group_id"]:
            return {"throttle_time_ms": 0, **sync_answer(Errors.INVALID_GROUP_ID)}
        if self._consumer_group(body["group_id"]) is not None:
            answer = self.consumer_groups.classic_sync(body)
        else:
            answer = await self.coordinator.sync_group(body)
        answer["throttle_time_ms"] = 0
        return answer

    async def handle_heartbeat(self, request, body: dict) -> dict:
        if not body["group_id"]:
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_GROUP_ID}
        if self._consumer_group(body["group_id"]) is not None:
            return {"throttle_time_ms": 0, "error_code": self.consumer_groups.classic_heartbeat(body)}
        return {"throttle_time_ms": 0, "error_code": self.coordinator.heartbeat(body)}

    async def handle_leave_group(self, request, body: dict) -> dict:
        version = request.api_version
        if version >= 3:
            identities = body["members"]
        else:
            identities = [{"member_id": body["member_id"], "group_instance_id": None}]
        if not body["group_id"]:
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_GROUP_ID, "members": []}
        if self._consumer_group(body["group_id"]) is not None:
            error, answers = await self.consumer_groups.classic_leave(body["group_id"], identities)
        else:
            error, answers = self.coordinator.leave_group(body["group_id"], identities)
        if version < 3 and error == Errors.NONE and answers:
            error = Errors(answers[0]["error_code"])
        return {"throttle_time_ms": 0, "error_code": error, "members": answers}

    # -- consumer groups (KIP-848) ---------------------------------------------------------

    async def handle_consumer_group_heartbeat(self, request, body: dict) -> dict:
        """KafkaApis.handleConsumerGroupHeartbeat: READ on the group (as registered), then DESCRIBE
        on every topic subscribed to by name, else TOPIC_AUTHORIZATION_FAILED with no message and
        no topic named (the answer says nothing of which exist), before the coordinator sees the
        heartbeat. A regex is checked where it is resolved, against this principal's rights."""
        assert self.consumer_groups is not None
        subscribed = set(body.get("subscribed_topic_names") or ())
        if subscribed and len(self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC,
                                                             subscribed)) < len(subscribed):
            return refusal_response(request, body, Errors.TOPIC_AUTHORIZATION_FAILED)
        await self.ensure_offsets_topic()  # the group's coordinator partition, as FindCoordinator makes it

        def describable(names: list[str]) -> set[str]:
            return self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC, names, log_if_denied=False)
        return await self.consumer_groups.heartbeat(request.api_version, request.client_id or "",
                                                    "/" + request.client_address[0], body,
                                                    describable if self.auth.enabled else None)

    async def handle_consumer_group_describe(self, request, body: dict) -> dict:
        assert self.consumer_groups is not None
        group_ids, refused = self._described_groups(request, body["group_ids"])
        answers = self.consumer_groups.describe(group_ids, self.metadata.name_of)
        for answer in answers:
            if not answer["group_id"]:
                answer.update(error_code=Errors.INVALID_GROUP_ID, error_message="The group id can't be empty.")
            elif answer["error_code"] == Errors.GROUP_ID_NOT_FOUND and (
                    self.coordinator.group(answer["group_id"]) or self._streams_group(answer["group_id"])):
                answer["error_message"] = f"Group {answer['group_id']} is not a consumer group."
        if body["include_authorized_operations"]:
            self._add_authorized_operations(request, answers)
        return {"throttle_time_ms": 0, "groups": _refused_described(request, refused)
                + self._resigned_described(request, answers)}

    def _resigned_described(self, request, answers: list[dict]) -> list[dict]:
        """ConsumerGroupDescribe's and ShareGroupDescribe's answers, a group whose partition is
        resigned answered as the API's error response answers it (getErrorDescribedGroupList)."""
        if not self.metadata.offline_partitions:
            return answers
        resigned = {answer["group_id"] for answer in answers if answer["group_id"] and
                    self._resigned(answer["group_id"])}
        if not resigned:
            return answers
        errors = error_response(request.api_key, request.api_version, {"group_ids": sorted(resigned)},
                                ApiError(Errors.NOT_COORDINATOR))["groups"]
        by_id = {error["group_id"]: error for error in errors}
        return [by_id.get(answer["group_id"], answer) for answer in answers]

    async def handle_streams_group_heartbeat(self, request, body: dict) -> dict:
        """KafkaApis.handleStreamsGroupHeartbeat: READ on the group (as registered); a topology's
        topics checked before the coordinator sees it (none of Kafka's internal topics, valid
        names, DESCRIBE on each); then the internal topics the coordinator found missing are
        created, with CREATE on the cluster or on each, else the member hears which it may not
        create."""
        topology = body["topology"]
        if topology is not None:
            required = _topology_topics(topology)
            prohibited = [name for name in required if name in INTERNAL_TOPICS]
            if prohibited:
                return error_answer(Errors.STREAMS_INVALID_TOPOLOGY, f"Use of Kafka internal topics "
                                    f"{','.join(prohibited)} in a Kafka Streams topology is prohibited.")
            invalid = [name for name in required if not _valid_topic_name(name)]
            if invalid:
                return error_answer(Errors.STREAMS_INVALID_TOPOLOGY,
                                    f"Topic names {','.join(invalid)} are not valid topic names.")
            if required and len(self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC,
                                                               required)) < len(required):
                return error_answer(Errors.TOPIC_AUTHORIZATION_FAILED, None)
        await self.ensure_offsets_topic()  # the group's coordinator partition, as FindCoordinator makes it
        answer, to_create = await self.streams_groups.heartbeat(request.client_id or "",
                                                                "/" + request.client_address[0], body)
        if to_create:
            self._create_streams_internal_topics(request, body["group_id"], answer, to_create)
        return answer

    def _create_streams_internal_topics(self, request, group_id: str, answer: dict, to_create: dict[str, dict]) -> None:
        statuses = answer["status"]
        missing = next((s for s in statuses if s["status_code"] == Status.MISSING_INTERNAL_TOPICS), None)
        unauthorized: list[str] = []
        if not self.auth.authorize(request, CREATE, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            allowed = self.auth.filter_by_authorized(request, CREATE, ResourceType.TOPIC, list(to_create))
            unauthorized = [name for name in to_create if name not in allowed]
        if unauthorized:
            detail = f"Unauthorized to CREATE on topics {', '.join(unauthorized)}."
            if missing is not None:
                missing["status_detail"] += "; " + detail
            else:
                statuses.append({"status_code": Status.MISSING_INTERNAL_TOPICS, "status_detail": detail})
            return
        # Errors are kept for two heartbeat intervals of the group, so its members hear of them.
        interval_ms = self.streams_groups.heartbeat_interval_ms(group_id)
        self.topic_creation.create_streams_internal_topics(to_create, 2 * interval_ms)
        if missing is not None:
            failed = list(self.topic_creation.streams_internal_topic_creation_errors(to_create).items())
            if failed:
                details = ", ".join(f"{topic} ({error})" for topic, error in failed[:_MAX_CREATION_ERRORS_TOLD])
                if len(failed) > _MAX_CREATION_ERRORS_TOLD:
                    details += f" and {len(failed) - _MAX_CREATION_ERRORS_TOLD} more"
                missing["status_detail"] = (missing["status_detail"] or "") + f"; Creation failed: {details}."

    async def handle_streams_group_describe(self, request, body: dict) -> dict:
        """KafkaApis.handleStreamsGroupDescribe: DESCRIBE on each group; with an authorizer, a
        group whose topology names a topic the principal may not DESCRIBE is answered
        TOPIC_AUTHORIZATION_FAILED."""
        group_ids, refused = self._described_groups(request, body["group_ids"])
        # GroupCoordinatorService.streamsGroupDescribe: the empty ids first, then the others by
        # __consumer_offsets partition, in the order of its HashMap of partitions (filled by
        # computeIfAbsent, which puts a new key at the head of its bucket), each in request order
        answers = [described_group_error("", Errors.INVALID_GROUP_ID, None) for group_id in group_ids if not group_id]
        by_partition: dict[tuple[str, int], list[str]] = {}
        for group_id in filter(None, group_ids):
            by_partition.setdefault((OFFSETS_TOPIC, self.partition_for(group_id)), []).append(group_id)
        for partition in java_hash_map_order(reversed(by_partition), hash_code=java_topic_partition_hash):
            answers.extend(self.streams_groups.describe(by_partition[partition]))
        if body["include_authorized_operations"]:
            self._add_authorized_operations(request, answers)
        answers = _refused_described(request, refused) + self._resigned_described(request, answers)
        if self.auth.enabled:
            answers = [self._topics_refused_described(request, answer) for answer in answers]
        return {"throttle_time_ms": 0, "groups": answers}

    def _topics_refused_described(self, request, answer: dict) -> dict:
        topology = answer.get("topology")
        if topology is None:
            return answer
        names = _topology_topics(topology)
        if len(self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC, names)) == len(names):
            return answer
        # a new DescribedGroup: nothing of the group but its id is told
        return described_group_error(answer["group_id"], Errors.TOPIC_AUTHORIZATION_FAILED,
                                     "The described group uses topics that the client is not authorized to describe.")

    def _held_by_another_kind(self, group_id: str, kind: str) -> bool:
        """A live group of the id exists, of another kind than `kind` (a group id is one kind of
        group at a time: Kafka then answers "Group X is not a <kind> group.")."""
        classic = self.coordinator.group(group_id)
        holders = {GROUP_TYPE_CLASSIC: classic is not None and not classic.is_in_state(GroupState.DEAD),
                   GROUP_TYPE_CONSUMER: self._consumer_group(group_id) is not None,
                   GROUP_TYPE_SHARE: self._share_group(group_id) is not None,
                   GROUP_TYPE_STREAMS: self._streams_group(group_id) is not None}
        return any(held for holder, held in holders.items() if holder != kind)

    def _has_modern_or_classic_group(self, group_id: str) -> bool:
        return (self.coordinator.group(group_id) is not None or self._consumer_group(group_id) is not None
                or self._streams_group(group_id) is not None)

    def _streams_group(self, group_id: str) -> StreamsGroup | None:
        return self.streams_groups.group(group_id)

    def _claim_for_streams_group(self, group_id: str) -> tuple[Callable[[], None], list[tuple[bytes, bytes | None]]]:
        """getOrCreateStreamsGroup: a new streams group takes the id; an empty classic group of the
        id is retired (its tombstone written before the group's first records); any other
        group keeps it."""
        if self._consumer_group(group_id) is not None or self._share_group(group_id) is not None:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        classic = self.coordinator.group(group_id)
        if classic is None or classic.is_in_state(GroupState.DEAD):
            return lambda: None, []
        if not classic.is_in_state(GroupState.EMPTY):
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")

        def retire() -> None:
            self.coordinator.unload_group(classic)
            logger.info("[GroupId %s] Converted the empty classic group to a streams group.", group_id)
        return retire, [(serde.group_metadata_key(group_id), None)]

    async def handle_share_group_heartbeat(self, request, body: dict) -> dict:
        assert self.share_groups is not None
        await self.ensure_offsets_topic()
        answer = await self.share_groups.heartbeat(request.client_id or "", "/" + request.client_address[0], body)
        return {"throttle_time_ms": 0, **answer}

    async def handle_share_group_describe(self, request, body: dict) -> dict:
        assert self.share_groups is not None
        group_ids, refused = self._described_groups(request, body["group_ids"])
        answers = self.share_groups.describe(group_ids, self.metadata.name_of)
        if body["include_authorized_operations"]:
            self._add_authorized_operations(request, answers)
        return {"throttle_time_ms": 0, "groups": _refused_described(request, refused)
                + self._resigned_described(request, answers)}

    async def handle_describe_share_group_offsets(self, request, body: dict) -> dict:
        """DESCRIBE on each group (GROUP_AUTHORIZATION_FAILED), then on each topic: a named one the
        principal may not describe is answered TOPIC_AUTHORIZATION_FAILED per partition, and from
        all of a group's offsets such topics are left out."""
        assert self.share_groups is not None

        def high_watermark(topic: str, partition: int) -> int | None:
            log = self.replica_manager.log_of((topic, partition))
            return None if log is None else log.high_watermark

        def described(group: dict) -> dict:
            group_id, topics = group["group_id"], group["topics"]
            if not self.auth.authorize(request, DESCRIBE, ResourceType.GROUP, group_id):
                refused = Errors.GROUP_AUTHORIZATION_FAILED
                return {"group_id": group_id, "error_code": refused, "error_message": default_message(refused),
                        "topics": []}
            if topics is None and self._resigned(group_id):  # every offset is read from the group's shard
                return {"group_id": group_id, "error_code": Errors.NOT_COORDINATOR, "topics": [],
                        "error_message": default_message(Errors.NOT_COORDINATOR)}
            if topics is None:
                answer = self.share_groups.describe_offsets(group_id, None, high_watermark)
                visible = self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC,
                                                         [t["topic_name"] for t in answer["topics"]],
                                                         log_if_denied=False)
                answer["topics"] = [t for t in answer["topics"] if t["topic_name"] in visible]
                return answer
            visible = self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC,
                                                     [t["topic_name"] for t in topics])
            answer = self.share_groups.describe_offsets(group_id, [t for t in topics if t["topic_name"] in visible],
                                                        high_watermark)
            refused = Errors.TOPIC_AUTHORIZATION_FAILED
            answer["topics"] = answer["topics"] + [
                {"topic_name": t["topic_name"], "topic_id": bytes(16), "partitions": [
                    {"partition_index": index, "start_offset": -1, "leader_epoch": -1, "lag": -1,
                     "error_code": refused, "error_message": default_message(refused)} for index in t["partitions"]]}
                for t in topics if t["topic_name"] not in visible]
            return answer
        return {"throttle_time_ms": 0, "groups": [described(group) for group in body["groups"]]}

    async def handle_alter_share_group_offsets(self, request, body: dict) -> dict:
        """READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition, not altered); READ on the
        group is checked as it is registered (one_group)."""
        assert self.share_groups is not None
        if not body["group_id"]:
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_GROUP_ID, "error_message": None,
                    "responses": []}
        readable = self.auth.filter_by_authorized(request, READ, ResourceType.TOPIC,
                                                  [t["topic_name"] for t in body["topics"]])
        await self.ensure_offsets_topic()
        answer = await self.share_groups.alter_offsets(body["group_id"],
                                                       [t for t in body["topics"] if t["topic_name"] in readable])
        refused = Errors.TOPIC_AUTHORIZATION_FAILED
        answer["responses"] = answer["responses"] + [
            {"topic_name": t["topic_name"], "topic_id": bytes(16), "partitions": [
                {"partition_index": p["partition_index"], "error_code": refused,
                 "error_message": default_message(refused)} for p in t["partitions"]]}
            for t in body["topics"] if t["topic_name"] not in readable]
        return {"throttle_time_ms": 0, **answer}

    async def handle_delete_share_group_offsets(self, request, body: dict) -> dict:
        """READ on each topic (TOPIC_AUTHORIZATION_FAILED, not deleted); DELETE on the group is
        checked as it is registered (one_group)."""
        assert self.share_groups is not None
        if not body["group_id"]:
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_GROUP_ID, "error_message": None,
                    "responses": []}
        readable = self.auth.filter_by_authorized(request, READ, ResourceType.TOPIC,
                                                  [t["topic_name"] for t in body["topics"]])
        answer = await self.share_groups.delete_offsets(body["group_id"],
                                                        [t for t in body["topics"] if t["topic_name"] in readable])
        refused = Errors.TOPIC_AUTHORIZATION_FAILED
        answer["responses"] = answer["responses"] + [
            {"topic_name": t["topic_name"], "topic_id": bytes(16), "error_code": refused,
             "error_message": default_message(refused)} for t in body["topics"] if t["topic_name"] not in readable]
        return {"throttle_time_ms": 0, **answer}

    def _share_group(self, group_id: str):
        return None if self.share_groups is None else self.share_groups.groups.get(group_id)

    def _consumer_group(self, group_id: str) -> ConsumerGroup | None:
        if self.consumer_groups is None:
            return None
        group = self.consumer_groups.group(group_id)
        return None if group is None or group.state is ConsumerGroupState.DEAD else group

    def _topics_view(self) -> dict[str, tuple[bytes, int]]:
        return {name: (topic.topic_id.bytes, topic.num_partitions) for name, topic in self.metadata.topics.items()}

    def _claim_for_consumer_group(self, group_id: str) -> tuple[ConsumerGroup, Callable[[], None]]:
        """The consumer group a first ConsumerGroupHeartbeat makes of the id
        (getOrMaybeCreateConsumerGroup): a new one, or the classic group of the id converted
        (its offsets stay either way); and the step that retires the classic group once the
        heartbeat has succeeded. Raises GroupError when the classic group cannot be upgraded."""
        if self._share_group(group_id) is not None or self._streams_group(group_id) is not None:
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        classic = self.coordinator.group(group_id)
        if classic is None or classic.is_in_state(GroupState.DEAD):
            return ConsumerGroup(group_id), lambda: None
        if classic.is_in_state(GroupState.EMPTY):
            group = ConsumerGroup(group_id)
            group.classic_records_before = [(serde.group_metadata_key(group_id), None)]

            def retire_empty() -> None:
                self.coordinator.unload_group(classic)
                logger.info("[GroupId %s] Converted the empty classic group to a consumer group.", group_id)
            return group, retire_empty
        self._validate_online_upgrade(classic)
        # Members parked in a join or a sync are told to join again now, as convertToConsumerGroup
        # tells them before it converts: into the consumer group, or into the classic group
        # should the conversion or this heartbeat be refused after all.
        for member in list(classic.members.values()):
            classic.complete_join_future(member, join_error(9, Errors.REBALANCE_IN_PROGRESS, member.member_id))
            classic.complete_sync_future(member, sync_answer(Errors.REBALANCE_IN_PROGRESS))
        group = group_migration.consumer_group_from_classic(classic, self._topics_view())
        group.classic_records_before = [(serde.group_metadata_key(group_id), None)]

        def retire() -> None:
            self.coordinator.unload_group(classic)
            logger.info("[GroupId %s] Converted the classic group to a consumer group.", group_id)
        return group, retire

    def _validate_online_upgrade(self, classic: ClassicGroup) -> None:
        group_id = classic.group_id
        reason = None
        if not self.consumer_groups.config.migration_policy.upgrade_enabled:
            reason = "online upgrade is disabled"
        elif classic.protocol_type != consumer_protocol.PROTOCOL_TYPE:
            reason = "the group does not use the consumer embedded protocol"
        elif classic.size > self.consumer_groups.config.max_size:
            reason = "the group size exceeds the consumer group maximum size"
        if reason is not None:
            logger.info("Cannot upgrade classic group %s to consumer group because %s.", group_id, reason)
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Cannot upgrade classic group {group_id} to consumer "
                             f"group because {reason}.")

    def _hand_back_to_classic_group(self, group: ConsumerGroup, leaving: set[str],
                                    rebalance: bool) -> list[tuple[bytes, bytes | None]]:
        """convertToClassicGroup: the classic group the remaining (classic) members form takes the
        id, with their sessions running, and rebalances when asked; its GroupMetadata record."""
        classic = group_migration.classic_group_from_consumer(group, leaving, self.metadata.name_of, self._clock_ms())
        record = serde.group_metadata_value(classic.metadata_value())
        self.coordinator.load_group(classic)
        if rebalance:
            reason = "member leaving" if leaving else "stale assignment"
            self.coordinator.prepare_rebalance(classic, f"Downgrade group {group.group_id} from consumer to classic "
                                                        f"for {reason}.")
        return [(serde.group_metadata_key(group.group_id), record)]

    # -- offsets -------------------------------------------------------------------------

    def _validate_offset_commit(self, group: ClassicGroup, member_id: str, instance_id: str | None,
                                generation_id: int, transactional: bool = False) -> Errors:
        """ClassicGroup.validateOffsetCommit. A transaction's commit (TxnOffsetCommit) naming no
        member is taken from a non-empty group too, and during a rebalance (older versions
        of that request carry no member)."""
        if group.is_in_state(GroupState.DEAD):
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.is_in_state(GroupState.EMPTY):
            return Errors.NONE  # a simple group, or an admin commit to an empty one
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or instance_id is not None:
            error = self.coordinator._validate_existing_member(group, member_id, instance_id)
            if error != Errors.NONE:
                return error
            if generation_id != group.generation_id:
                return Errors.ILLEGAL_GENERATION
        elif not transactional and not group.is_in_state(GroupState.EMPTY):
            return Errors.UNKNOWN_MEMBER_ID
        if not transactional and group.is_in_state(GroupState.COMPLETING_REBALANCE):
            return Errors.REBALANCE_IN_PROGRESS
        return Errors.NONE

    def _offset_records(self, group_id: str, request_topics: list[dict], now: int, expire_ms: int | None) -> tuple:
        """The records of an offset commit, the offsets they carry, and the answer topics
        (OFFSET_METADATA_TOO_LARGE where the metadata is over offset.metadata.max.bytes)."""
        entries: list[tuple[bytes, bytes | None]] = []
        values: list[tuple[str, int, serde.OffsetAndMetadata]] = []
        topics = []
        for topic in request_topics:
            partitions = []
            for entry in topic["partitions"]:
                index = entry["partition_index"]
                metadata = entry["committed_metadata"] or ""
                code = Errors.NONE
                if _java_length(metadata) > self.config.offset_metadata_max_bytes:
                    code = Errors.OFFSET_METADATA_TOO_LARGE
                else:
                    value = serde.OffsetAndMetadata(entry["committed_offset"], entry.get("committed_leader_epoch", -1),
                                                    metadata, now, expire_ms, self._topic_id(topic["name"]))
                    entries.append((serde.offset_commit_key(group_id, topic["name"], index),
                                    serde.offset_commit_value(value)))
                    values.append((topic["name"], index, value))
                partitions.append({"partition_index": index, "error_code": code})
            topics.append({"name": topic["name"], "partitions": partitions})
        return entries, values, topics

    def _known_partitions(self, request_topics: list[dict]) -> tuple[list[dict], list[dict]]:
        """KafkaApis' split of an offset request's topics: those of partitions this broker has,
        and the answers (UNKNOWN_TOPIC_OR_PARTITION) of the others, which the coordinator never
        sees."""
        known, unknown = [], []
        for topic in request_topics:
            name = topic["name"]
            have, missing = [], []
            for partition in topic["partitions"]:
                (have if self.metadata.has_partition(name, partition["partition_index"]) else missing).append(partition)
            if have:
                known.append({**topic, "partitions": have})
            if missing:
                unknown.append({"name": name, "partitions": [
                    {"partition_index": p["partition_index"], "error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION}
                    for p in missing]})
        return known, unknown

    def _named_by_id(self, topics: list[dict], partitions_key: str, unknown_answer: Callable[[int], dict]
                     ) -> tuple[list[dict], list[dict]]:
        """OffsetCommit and OffsetFetch v10 name topics by id (KIP-848): the topics given their
        names, and the answers of those whose id this broker does not know (UNKNOWN_TOPIC_ID)."""
        named, unknown = [], []
        for topic in topics:
            topic_id = bytes(topic["topic_id"])
            name = self.metadata.name_of(topic_id)
            if name is None:
                unknown.append({"name": "", "topic_id": topic_id, "partitions": [
                    unknown_answer(p if isinstance(p, int) else p["partition_index"]) for p in topic[partitions_key]]})
            else:
                named.append({**topic, "name": name})
        return named, unknown

    def _topic_id(self, name: str) -> bytes:
        topic = self.metadata.get(name)
        return topic.topic_id.bytes if topic is not None else serde.NO_TOPIC_ID

    def _topic_partitions(self, topics: list[dict]) -> list[tuple[bytes, int]]:
        """(topic id, partition) of the offsets a commit will write, all of topics that exist: a
        partition whose metadata is too large is answered so and not checked against the member
        (OffsetMetadataManager.commitOffset validates only the partitions it would write)."""
        return [(self._topic_id(topic["name"]), partition["partition_index"])
                for topic in topics for partition in topic["partitions"] if self._metadata_fits(partition)]

    def _partitions_by_topic(self, topics: list[dict]) -> dict[str, list[int]]:
        """The partitions of a commit a streams group checks, by topic name: as _topic_partitions,
        those whose metadata is too large are not checked."""
        return {topic["name"]: [p["partition_index"] for p in topic["partitions"] if self._metadata_fits(p)]
                for topic in topics}

    def _metadata_fits(self, partition: dict) -> bool:
        """The commit's metadata is within offset.metadata.max.bytes (in Java chars, as Kafka counts)."""
        return _java_length(partition["committed_metadata"] or "") <= self.config.offset_metadata_max_bytes

    def _with_topic_ids(self, answer_topics: list[dict]) -> list[dict]:
        """Answer topics with their ids, as v10 answers them; one without an id (its topic was
        deleted) cannot be written in a v10 answer and is left out."""
        answered = []
        for topic in answer_topics:
            metadata = self.metadata.get(topic["name"])
            if metadata is not None:
                answered.append({**topic, "topic_id": metadata.topic_id.bytes})
        return answered

    async def handle_offset_commit(self, request, body: dict) -> dict:
        unknown_ids: list[dict] = []
        if request.api_version >= OFFSETS_BY_TOPIC_ID_MIN_VERSION:
            named, unknown_ids = self._named_by_id(
                body["topics"], "partitions", lambda index: {"partition_index": index,
                                                             "error_code": Errors.UNKNOWN_TOPIC_ID})
            body = {**body, "topics": named}
        authorized, refused = self._split_topics_by_read(request, body["topics"])
        known, unknown = self._known_partitions(authorized)
        unknown = refused + unknown
        if not known:  # nothing for the coordinator: no group is checked or made
            answer = {"throttle_time_ms": 0, "topics": unknown}
        else:
            answer = await self._commit_offsets(request, {**body, "topics": known})
            answer["topics"] = _merge_topics(answer["topics"], unknown)
        if request.api_version >= OFFSETS_BY_TOPIC_ID_MIN_VERSION:
            answer["topics"] = self._with_topic_ids(answer["topics"]) + unknown_ids
        return answer

    async def _commit_offsets(self, request, body: dict) -> dict:
        version = request.api_version
        group_id = body["group_id"]
        generation_id = body["generation_id_or_member_epoch"]
        if not group_id:
            return _answer_all(body, Errors.INVALID_GROUP_ID)
        if self._share_group(group_id) is not None:  # ShareGroup.validateOffsetCommit: not a consumer group
            return _answer_all(body, Errors.GROUP_ID_NOT_FOUND)
        consumer_group = self._consumer_group(group_id)
        streams_group = self._streams_group(group_id)
        if consumer_group is not None:
            error = consumer_group.validate_offset_commit(body["member_id"], body["group_instance_id"], generation_id,
                                                          version >= 9, False, self._topic_partitions(body["topics"]))
        elif streams_group is not None:
            error = streams_group.validate_offset_commit(body["member_id"], body["group_instance_id"], generation_id,
                                                         version >= 9, False, self._partitions_by_topic(body["topics"]))
        else:
            group = self.coordinator.group(group_id)
            if group is None:
                if generation_id >= 0:
                    return _answer_all(body, Errors.GROUP_ID_NOT_FOUND if version >= 9 else Errors.ILLEGAL_GENERATION)
                group = self.coordinator.get_or_create_group(group_id)
            error = self._validate_offset_commit(group, body["member_id"], body["group_instance_id"], generation_id)
            member = group.members.get(body["member_id"])
            if error == Errors.NONE and member is not None and (
                    group.is_in_state(GroupState.STABLE) or group.is_in_state(GroupState.PREPARING_REBALANCE)):
                # A classic member's commits keep its session, as heartbeats do.
                self.coordinator.reschedule_heartbeat(group, member)
        if error != Errors.NONE:
            return _answer_all(body, error)
        now = self._clock_ms()
        retention_ms = body.get("retention_time_ms", -1) if version <= 4 else -1
        # OffsetMetadataManager.expireTimestampMs: only -1 means the broker's retention; any
        # other value is added to now in a Java long, which wraps.
        expire_ms = None if retention_ms == DEFAULT_RETENTION_TIME_MS else _as_int64(now + retention_ms)
        entries, committed, topics = self._offset_records(group_id, body["topics"], now, expire_ms)
        self.metrics.offset_commits += len(committed)
        if entries:
            try:
                end_offset = await self._append(group_id, entries)
            except GroupError as exc:
                return _fail_written(topics, exc.code)
            first_offset = end_offset - len(committed)
            for position, (name, index, value) in enumerate(committed):
                self.offsets.replay(group_id, name, index, value, first_offset + position)
            # A simple group keeps the offsets, but only where no group of another kind is
            # (OffsetMetadataManager.replay): a consumer group's commits make no classic group.
            if not self._has_modern_or_classic_group(group_id):
                self.coordinator.get_or_create_group(group_id)  # deleted meanwhile: the offsets stay
        return {"throttle_time_ms": 0, "topics": topics}

    async def handle_offset_fetch(self, request, body: dict) -> dict:
        stable = bool(body.get("require_stable"))  # v7+: UNSTABLE_OFFSET_COMMIT where a transaction is open
        if request.api_version >= 8:
            by_id = request.api_version >= OFFSETS_BY_TOPIC_ID_MIN_VERSION
            groups = []
            for entry in body["groups"]:
                if not self.auth.authorize(request, DESCRIBE, ResourceType.GROUP, entry["group_id"]):
                    groups.append({"group_id": entry["group_id"], "error_code": Errors.GROUP_AUTHORIZATION_FAILED,
                                   "topics": []})
                    continue
                if self._resigned(entry["group_id"]):
                    groups.append({"group_id": entry["group_id"], "error_code": Errors.NOT_COORDINATOR, "topics": []})
                    continue
                member_group = self._consumer_group(entry["group_id"]) or self._streams_group(entry["group_id"])
                error = Errors.NONE if member_group is None else member_group.validate_offset_fetch(
                    entry.get("member_id"), entry.get("member_epoch", -1))
                if self._share_group(entry["group_id"]) is not None:  # ShareGroup.validateOffsetFetch
                    error = Errors.GROUP_ID_NOT_FOUND
                asked, unknown_ids = entry["topics"], []
                if by_id and asked is not None:
                    asked, unknown_ids = self._named_by_id(asked, "partition_indexes", _unknown_topic_id_offset)
                topics = [] if error != Errors.NONE else self._fetched_offsets(request, entry["group_id"], asked,
                                                                                stable)
                if by_id and error == Errors.NONE:
                    topics = self._with_topic_ids(topics) + unknown_ids
                groups.append({"group_id": entry["group_id"], "error_code": error, "topics": topics})
            return {"throttle_time_ms": 0, "groups": groups}
        topics = body["topics"]
        return {"throttle_time_ms": 0, "error_code": Errors.NONE,
                "topics": self._fetched_offsets(request, body["group_id"], topics, stable)}

    # -- offsets in transactions -----------------------------------------------------------

    async def handle_txn_offset_commit(self, request, body: dict) -> dict:
        authorized, refused = self._split_topics_by_read(request, body["topics"])
        known, unknown = self._known_partitions(authorized)
        unknown = refused + unknown
        if not known:
            return {"throttle_time_ms": 0, "topics": unknown}
        answer = await self._commit_transactional_offsets(request, {**body, "topics": known})
        answer["topics"] = _merge_topics(answer["topics"], unknown)
        return answer

    async def _commit_transactional_offsets(self, request, body: dict) -> dict:
        """GroupCoordinator.commitTransactionalOffsets: one transactional batch, pending until the marker."""
        group_id = body["group_id"]
        generation_id = body.get("generation_id", -1)
        member_id = body.get("member_id") or UNKNOWN_MEMBER_ID
        instance_id = body.get("group_instance_id")
        if not group_id:
            return _answer_all(body, Errors.INVALID_GROUP_ID)
        if self._share_group(group_id) is not None:
            return _answer_all(body, Errors.GROUP_ID_NOT_FOUND)
        await self.ensure_offsets_topic()
        guard = VerificationGuard.SENTINEL
        if self.transaction_verifier is not None:
            # The guard first, then the coordinator: a marker written in between clears it
            # and the append is refused (CoordinatorRuntime.scheduleTransactionalWriteOperation).
            # No guard (the transaction is open in the partition already, or v0-4 commits with
            # verification off): the coordinator is not asked (maybeSendPartitionsToTransactionCoordinator).
            try:
                guard = self.writer.maybe_start_transaction_verification(
                    self.partition_for(group_id), body["producer_id"], body["producer_epoch"],
                    supports_epoch_bump=request.api_version > 4)
            except CoordinatorWriteError as exc:
                return _answer_all(body, exc.code)
            if guard is not VerificationGuard.SENTINEL:
                error = await self.transaction_verifier(body["transactional_id"], body["producer_id"],
                                                        body["producer_epoch"], self.partition_for(group_id),
                                                        request.api_version)
                if error != Errors.NONE:
                    return _answer_all(body, error)
        consumer_group = self._consumer_group(group_id)
        streams_group = self._streams_group(group_id)
        if consumer_group is not None or streams_group is not None:
            if consumer_group is not None:
                error = consumer_group.validate_offset_commit(member_id, instance_id, generation_id, True, True,
                                                              self._topic_partitions(body["topics"]))
            else:
                error = streams_group.validate_offset_commit(member_id, instance_id, generation_id, True, True,
                                                             self._partitions_by_topic(body["topics"]))
            if error == Errors.STALE_MEMBER_EPOCH:  # what a transactional producer recovers from
                error = Errors.ILLEGAL_GENERATION  # (OffsetMetadataManager.validateTransactionalOffsetCommit)
        else:
            group = self.coordinator.group(group_id)
            if group is None:
                if generation_id >= 0:
                    return _answer_all(body, Errors.ILLEGAL_GENERATION)
                group = self.coordinator.get_or_create_group(group_id)
            error = self._validate_offset_commit(group, member_id, instance_id, generation_id, transactional=True)
        if error != Errors.NONE:
            return _answer_all(body, error)
        entries, pending, topics = self._offset_records(group_id, body["topics"], self._clock_ms(), None)
        self.metrics.offset_commits += len(pending)
        if entries:
            producer_id = body["producer_id"]
            try:
                end_offset = await self._append(group_id, entries, producer_id, body["producer_epoch"], guard)
            except GroupError as exc:
                return _fail_written(topics, exc.code)
            first_offset = end_offset - len(pending)
            coordinator_partition = self.partition_for(group_id)
            for position, (name, index, value) in enumerate(pending):
                self.offsets.replay_transactional(coordinator_partition, producer_id, group_id, name, index, value,
                                                  first_offset + position)
        return {"throttle_time_ms": 0, "topics": topics}

    async def on_topic_deleted(self, topic: str) -> None:
        """OffsetMetadataManager.onTopicsDeleted: every group's offsets of a deleted topic,
        committed or pending in a transaction, are tombstoned, so that a topic made again
        under the name starts with none."""
        for group_id, partitions in self.offsets.partitions_of_topics({topic}).items():
            # A failed write is logged by _append; the offsets stay until the group's next cleanup.
            await self._tombstone_offsets(group_id, sorted(partitions))
        if self.share_groups is not None:
            self.share_groups.forget_deleted_topics()

    def on_transaction_marker(self, partition: int, producer_id: int, commit: bool) -> None:
        """The transaction coordinator wrote the producer's marker into this partition."""
        for group_id in self.offsets.replay_end_transaction_marker(partition, producer_id, commit):
            if commit and self.offsets.has_offsets(group_id) and not self._has_modern_or_classic_group(group_id):
                self.coordinator.get_or_create_group(group_id)  # deleted meanwhile: the offsets stay

    async def handle_offset_delete(self, request, body: dict) -> dict:
        group_id = body["group_id"]
        if not group_id:
            return {"error_code": Errors.INVALID_GROUP_ID, "throttle_time_ms": 0, "topics": []}
        authorized, refused = self._split_topics_by_read(request, body["topics"])
        known, unknown = self._known_partitions(authorized)
        unknown = refused + unknown
        answer = await self._delete_offsets(group_id, known)
        if answer["error_code"] == Errors.NONE:
            answer["topics"] = _merge_topics(answer["topics"], unknown)
        return answer

    async def _delete_offsets(self, group_id: str, request_topics: list[dict]) -> dict:
        subscribed: set[str] | None = set()
        if self._share_group(group_id) is not None:  # ShareGroup.validateOffsetDelete
            return {"error_code": Errors.GROUP_ID_NOT_FOUND, "throttle_time_ms": 0, "topics": []}
        consumer_group = self._consumer_group(group_id)
        streams_group = self._streams_group(group_id)
        if consumer_group is not None:  # the topics its members subscribe to keep their offsets
            subscribed = consumer_group.subscribed_topic_names(set(self.metadata.topics))
        elif streams_group is not None:  # and a streams group's source topics, while it has members
            subscribed = {name for name in self.metadata.topics if streams_group.is_subscribed_to_topic(name)}
        else:
            group = self.coordinator.group(group_id)
            if group is None or group.is_in_state(GroupState.DEAD):
                return {"error_code": Errors.GROUP_ID_NOT_FOUND, "throttle_time_ms": 0, "topics": []}
            if not group.is_in_state(GroupState.EMPTY):
                if group.protocol_type != "consumer":
                    return {"error_code": Errors.NON_EMPTY_GROUP, "throttle_time_ms": 0, "topics": []}
                subscribed = group.subscribed_topics()
        deleted, topics = [], []
        for topic in request_topics:
            name = topic["name"]
            partitions = []
            for entry in topic["partitions"]:
                index = entry["partition_index"]
                if subscribed is None or name in subscribed:
                    partitions.append({"partition_index": index, "error_code": Errors.GROUP_SUBSCRIBED_TO_TOPIC})
                    continue
                if ((name, index) in self.offsets.group_offsets(group_id)
                        or self.offsets.has_pending(group_id, name, index)):
                    deleted.append((name, index))
                partitions.append({"partition_index": index, "error_code": Errors.NONE})
            topics.append({"name": name, "partitions": partitions})
        self.metrics.offset_deletions += len(deleted)
        error = await self._tombstone_offsets(group_id, deleted)
        if error != Errors.NONE:
            return {"error_code": error, "throttle_time_ms": 0, "topics": []}
        return {"error_code": Errors.NONE, "throttle_time_ms": 0, "topics": topics}

    # -- group administration ---------------------------------------------------------------

    async def handle_list_groups(self, request, body: dict) -> dict:
        """With DESCRIBE on the cluster every group is listed (Kafka keeps that for older
        tools); without it only the groups the principal may DESCRIBE, both asked without an
        audit line for a refusal."""
        answer = self._list_groups(body)
        if not self.auth.authorize(request, DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            answer["groups"] = [group for group in answer["groups"] if self.auth.authorize(
                request, DESCRIBE, ResourceType.GROUP, group["group_id"], log_if_denied=False)]
        return answer

    def _list_groups(self, body: dict) -> dict:
        states = {s.lower() for s in body.get("states_filter") or []}
        types = {t.lower() for t in body.get("types_filter") or []}
        groups = []
        for group in self.coordinator.groups.values():
            if group.is_in_state(GroupState.DEAD) or self._resigned(group.group_id):
                continue
            if states and group.state.value.lower() not in states:
                continue
            if types and GROUP_TYPE_CLASSIC not in types:
                continue
            groups.append({"group_id": group.group_id, "protocol_type": group.protocol_type or "",
                           "group_state": group.state.value, "group_type": GROUP_TYPE_CLASSIC})
        for consumer_group in (self.consumer_groups.groups.values() if self.consumer_groups is not None else ()):
            state = consumer_group.state.value
            if ((states and state.lower() not in states) or (types and GROUP_TYPE_CONSUMER not in types)
                    or self._resigned(consumer_group.group_id)):
                continue
            groups.append({"group_id": consumer_group.group_id, "protocol_type": GROUP_TYPE_CONSUMER,
                           "group_state": state, "group_type": GROUP_TYPE_CONSUMER})
        for share_group in (self.share_groups.groups.values() if self.share_groups is not None else ()):
            state = share_group.state
            if ((states and state.lower() not in states) or (types and GROUP_TYPE_SHARE not in types)
                    or self._resigned(share_group.group_id)):
                continue
            groups.append({"group_id": share_group.group_id, "protocol_type": GROUP_TYPE_SHARE,
                           "group_state": state, "group_type": GROUP_TYPE_SHARE})
        for streams_group in self.streams_groups.groups.values():
            state = streams_group.state
            if ((states and state.lower_case_name not in states) or (types and GROUP_TYPE_STREAMS not in types)
                    or self._resigned(streams_group.group_id)):
                continue
            groups.append({"group_id": streams_group.group_id, "protocol_type": GROUP_TYPE_STREAMS,
                           "group_state": state.value, "group_type": GROUP_TYPE_STREAMS})
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "groups": groups}

    async def handle_describe_groups(self, request, body: dict) -> dict:
        group_ids, refused = self._described_groups(request, body["groups"])
        # DescribeGroupsResponse.groupError: the refused groups first, as Kafka answers them
        answers: list[dict] = [{"error_code": Errors.GROUP_AUTHORIZATION_FAILED, "error_message": None,
                                "group_id": group_id, "group_state": "", "protocol_type": "", "protocol_data": "",
                                "members": [], "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}
                               for group_id in refused]
        described = []
        for group_id in group_ids:
            answer: dict[str, Any] = {"error_code": Errors.NONE, "error_message": None, "group_id": group_id,
                                      "group_state": "Dead", "protocol_type": "", "protocol_data": "", "members": [],
                                      "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}
            described.append(answer)
            if not group_id:
                answer["error_code"] = Errors.INVALID_GROUP_ID
                continue
            if self._resigned(group_id):  # DescribeGroupsRequest.getErrorDescribedGroupList
                answer.update(error_code=Errors.NOT_COORDINATOR, group_state="", protocol_type="")
                continue
            not_classic = (self._consumer_group(group_id) is not None or self._share_group(group_id) is not None
                           or self._streams_group(group_id) is not None)
            group = None if not_classic else self.coordinator.group(group_id)
            if group is None:
                # GroupMetadataManager.describeGroups: a group that is not classic is Dead; from
                # v6 (KIP-1043) that says GROUP_ID_NOT_FOUND, before it says nothing.
                if request.api_version >= 6:
                    answer["error_code"] = Errors.GROUP_ID_NOT_FOUND
                    answer["error_message"] = (f"Group {group_id} is not a classic group." if not_classic
                                               else f"Group {group_id} not found.")
                continue
            stable = group.is_in_state(GroupState.STABLE)
            answer.update(group_state=group.state.value, protocol_type=group.protocol_type or "",
                          protocol_data=group.protocol_name or "" if stable else "")
            answer["members"] = [{
                "member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata(group.protocol_name) if stable and group.protocol_name else b"",
                "member_assignment": m.assignment} for m in group.members.values()]
        if body["include_authorized_operations"]:
            self._add_authorized_operations(request, described)
        return {"throttle_time_ms": 0, "groups": answers + described}

    async def handle_delete_groups(self, request, body: dict) -> dict:
        """DELETE on each group; the refused ones are answered after the others."""
        names = body["groups_names"]
        if self.auth.enabled:  # KafkaApis asks once per distinct group (partitionSeqByAuthorized)
            names = list(dict.fromkeys(names))
        allowed = self.auth.filter_by_authorized(request, DELETE, ResourceType.GROUP, names)
        results = []
        for group_id in names:
            if group_id in allowed:
                results.append({"group_id": group_id, "error_code": await self._delete_group(group_id)})
        results += [{"group_id": group_id, "error_code": Errors.GROUP_AUTHORIZATION_FAILED}
                    for group_id in names if group_id not in allowed]
        return {"throttle_time_ms": 0, "results": results}

    async def _delete_group(self, group_id: str) -> int:
        group = self.coordinator.group(group_id)
        if not group_id:
            return Errors.INVALID_GROUP_ID
        if self._resigned(group_id):
            return Errors.NOT_COORDINATOR
        if self._share_group(group_id) is not None:
            try:
                await self.share_groups.delete_group(group_id)
            except GroupError as exc:
                return exc.code
            return Errors.NONE
        consumer_group = self._consumer_group(group_id)
        modern = consumer_group if consumer_group is not None else self._streams_group(group_id)
        if modern is not None:
            if modern.members:
                return Errors.NON_EMPTY_GROUP
            # GroupCoordinatorShard.deleteGroups: the offsets' tombstones, then the group's, in one write
            offsets = self._all_offsets(group_id)
            coordinator = self.consumer_groups if consumer_group is not None else self.streams_groups
            try:
                await coordinator.delete_group(group_id, [(serde.offset_commit_key(group_id, t, p), None)
                                                          for t, p in offsets])
            except GroupError as exc:
                return exc.code
            for topic, partition in offsets:
                self.offsets.replay(group_id, topic, partition, None)
            return Errors.NONE
        if group is None or group.is_in_state(GroupState.DEAD):
            return Errors.GROUP_ID_NOT_FOUND
        if not group.is_in_state(GroupState.EMPTY):
            return Errors.NON_EMPTY_GROUP
        return await self._tombstone_group(group, self._all_offsets(group_id))

    def _all_offsets(self, group_id: str) -> list[tuple[str, int]]:
        """The committed offsets and, after them, pending transactional ones (Kafka's
        deleteAllOffsets): one tombstone per partition."""
        committed = list(self.offsets.group_offsets(group_id))
        return committed + sorted(self.offsets.pending_partitions(group_id).difference(committed))

    async def _tombstone_offsets(self, group_id: str, offsets: list[tuple[str, int]],
                                 also: tuple[bytes, ...] = ()) -> int:
        """Write tombstones for the offsets (and the keys in `also`), then forget the offsets."""
        entries = [(serde.offset_commit_key(group_id, t, p), None) for t, p in offsets] + [(k, None) for k in also]
        if not entries:
            return Errors.NONE
        try:
            await self._append(group_id, entries)
        except GroupError as exc:
            return exc.code
        for topic, partition in offsets:
            self.offsets.replay(group_id, topic, partition, None)
        return Errors.NONE

    async def _tombstone_group(self, group: ClassicGroup, offsets: list[tuple[str, int]]) -> int:
        """Write tombstones for the offsets and the group, then forget them."""
        self.coordinator.unload_group(group)  # Dead at once: no join slips in during the write
        error = await self._tombstone_offsets(group.group_id, offsets, (serde.group_metadata_key(group.group_id),))
        if error == Errors.NONE:
            logger.info("Deleted group %s and %d offsets", group.group_id, len(offsets))
        return error

    # -- retention ---------------------------------------------------------------------------

    async def _expire_periodically(self) -> None:
        interval_s = self.config.offsets_retention_check_interval_ms / 1000
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self.cleanup_group_metadata()
            except Exception:  # the next round tries again
                logger.exception("Offsets expiration failed")

    async def cleanup_group_metadata(self, now_ms: int | None = None) -> int:
        """Expire offsets past retention (as of now_ms, default now); delete Empty groups
        left with none. The number of offsets removed."""
        now = self._clock_ms() if now_ms is None else now_ms
        removed = 0
        for group in list(self.coordinator.groups.values()):
            simple = group.protocol_type is None
            empty = simple or group.is_in_state(GroupState.EMPTY)
            subscribed = None
            if not empty and group.is_in_state(GroupState.STABLE):
                topics = group.subscribed_topics()
                if topics is not None:
                    subscribed = topics.__contains__
            if (not empty and subscribed is None) or group.pending_members:
                continue
            expired = self.offsets.expired_offsets(
                group.group_id, now, self.config.offsets_retention_ms, empty,
                None if simple else group.current_state_timestamp_ms, subscribed)
            self.metrics.offset_expirations += len(expired)
            if (group.is_in_state(GroupState.EMPTY) and not self.offsets.has_open_transactions(group.group_id)
                    and len(expired) == len(self.offsets.group_offsets(group.group_id))):
                if await self._tombstone_group(group, expired) == Errors.NONE:
                    removed += len(expired)
                continue
            if expired and await self._tombstone_offsets(group.group_id, expired) == Errors.NONE:
                removed += len(expired)
        topic_names = set(self.metadata.topics)
        modern = [(coordinator, group, group.is_subscribed_to_topic if coordinator is self.streams_groups
                   else frozenset(group.subscribed_topic_names(topic_names)).__contains__)
                  for coordinator in (self.consumer_groups, self.streams_groups) if coordinator is not None
                  for group in list(coordinator.groups.values())]
        for coordinator, group, subscribed in modern:
            group_id = group.group_id
            empty = not group.members
            expired = self.offsets.expired_offsets(group_id, now, self.config.offsets_retention_ms, empty,
                                                   None, None if empty else subscribed)
            self.metrics.offset_expirations += len(expired)
            if expired and await self._tombstone_offsets(group_id, expired) == Errors.NONE:
                removed += len(expired)
            if (empty and not self.offsets.has_offsets(group_id)
                    and not self.offsets.has_open_transactions(group_id)):
                with contextlib.suppress(GroupError):  # the next round tries again
                    await coordinator.delete_group(group_id)
        if removed:
            logger.info("Removed %d expired offsets", removed)
        return removed


def _topology_topics(topology: dict) -> list[str]:
    """Every topic a heartbeat's or a description's topology names, each once, in its order
    (KafkaApis' requiredTopics)."""
    return list(dict.fromkeys(name for subtopology in topology["subtopologies"] for name in (
        *subtopology["source_topics"], *subtopology["repartition_sink_topics"],
        *(t["name"] for t in subtopology["repartition_source_topics"]),
        *(t["name"] for t in subtopology["state_changelog_topics"]))))


def _valid_topic_name(name: str) -> bool:
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return False
    return True


def _answer_all(body: dict, code: int) -> dict:
    """An OffsetCommit/TxnOffsetCommit answer giving every asked partition the same error."""
    return {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "topic_id": t.get("topic_id"),
         "partitions": [{"partition_index": p["partition_index"], "error_code": code} for p in t["partitions"]]}
        for t in body["topics"]]}


def _unknown_topic_id_offset(index: int) -> dict:
    """KafkaApis.fetchOffsetsForGroup's answer of a partition of an unknown topic id."""
    return {"partition_index": index, "committed_offset": -1, "committed_leader_epoch": -1, "metadata": "",
            "error_code": Errors.UNKNOWN_TOPIC_ID}


def _fail_written(topics: list[dict], code: int) -> dict:
    """The answer when the write failed: its error for every partition that had none."""
    for topic in topics:
        for partition in topic["partitions"]:
            if partition["error_code"] == Errors.NONE:
                partition["error_code"] = code
    return {"throttle_time_ms": 0, "topics": topics}


def _as_int64(value: int) -> int:
    """`value` wrapped into a Java long, as Java's arithmetic leaves it."""
    return (value + 2**63) % 2**64 - 2**63


def _java_length(text: str) -> int:
    """String.length(): UTF-16 code units, what Kafka measures offset metadata in."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def _merge_topics(answered: list[dict], more: list[dict]) -> list[dict]:
    """Answer topics with `more` partitions added, a topic named in both kept as one."""
    merged = {topic["name"]: topic for topic in answered}
    for topic in more:
        if topic["name"] in merged:
            merged[topic["name"]]["partitions"].extend(topic["partitions"])
        else:
            answered.append(topic)
            merged[topic["name"]] = topic
    return answered


def _refused_described(request, group_ids: list[str]) -> list[dict]:
    """ConsumerGroupDescribe's and ShareGroupDescribe's answers of the groups the principal may
    not DESCRIBE: GROUP_AUTHORIZATION_FAILED, no message."""
    if not group_ids:
        return []
    answers = error_response(request.api_key, request.api_version, {"group_ids": group_ids},
                             ApiError(Errors.GROUP_AUTHORIZATION_FAILED))["groups"]
    for answer in answers:
        answer["error_message"] = None
    return answers
