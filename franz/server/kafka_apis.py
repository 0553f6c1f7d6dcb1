"""KafkaApis: decode each request, run its handler, encode the answer (kafka.server.KafkaApis).

`handle(request)` is the SocketServer's handler. Rules at the door, as Kafka's
RequestContext and SocketServer apply them:
- an API key franz does not serve, or a body that does not parse under its
  version, closes that connection (one log line), since nothing after it on
  the connection can be framed with confidence;
- a known API in a version outside its range is answered with
  UNSUPPORTED_VERSION: ApiVersions in v0 (with the ranges, so the client can
  pick), other APIs with a top-level error code at the nearest version franz
  speaks; an API without a top-level error code closes the connection;
- acks=0 produces are not answered, and a failed one closes the connection so
  that the producer notices (Kafka's rule);
- a handler that raises is logged with its traceback and its request answered
  with the error response Kafka builds for it (error_responses: the error code
  in every place the response has one); the connection stays open.

Handlers of the data path live here; the APIs Kafka forwards to its controller
(topics, config changes, leaders, reassignments) are in ControllerApis, the
coordinators', ACLs', quotas' and SCRAM's in their own modules, all registered
here (`register`). Config rendering goes through config_helper, log dirs and
producer ids through their owners. Each handler returns the response body as
a dict in the schema's field names (franz/protocol/messages). A handler's
`throttle_time_ms` (a quota) mutes the connection for that long after the
answer; request_percentage quotas are recorded here, around every handler.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
import shutil
import struct
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final

from franz.coordinator.transaction.transaction_coordinator import TV_2, as_add_partitions_manager_answers
from franz.protocol import api_keys
from franz.protocol.codec import decode_request, encode_response
from franz.protocol.codegen import MessageDecodeError
from franz.protocol.error_counts import error_counts
from franz.protocol.errors import Errors, default_message
from franz.protocol.produce_request import (InvalidProduceRecordsError, has_transactional_records, transactional_producer,
                                            validate_records)
from franz.server import config_helper
from franz.server.auth_helper import CLUSTER_NAME, DESCRIBE_CONFIGS, AuthHelper
from franz.server.broker_metrics import BrokerMetrics
from franz.server.client_quota_manager import ClientQuotaManager
from franz.server.controller import ApiError, Controller
from franz.server.error_responses import error_code_of, error_response, refusal_response
from franz.server.fetch_session import TOPIC_IDS_MIN_VERSION, CachedPartition, FetchContext, FetchSessionCache
from franz.server.metadata_cache import (INTERNAL_TOPICS, InvalidTopicError, MetadataCache, TopicMetadata,
                                         validate_topic_name)
from franz.server.producer_id_manager import ProducerIdManager
from franz.server.replica_alter_log_dirs import ReplicaAlterLogDirsManager
from franz.server.replica_manager import PartitionFetch, ReplicaManager
from franz.server.standard_authorizer import AclOperation, ResourceType
from franz.server.request_thread_time import Timed, take_current_ns
from franz.server.request_channel import (CLOSE_CONNECTION, NO_RESPONSE, REQUEST_LOGGER,
                                         UNKNOWN_CLIENT_INFORMATION, Request, Response, handling)
from franz.server.request_convert_to_json import request_json, response_json
from franz.storage.local_log import KafkaStorageError, OffsetOutOfRangeError
from franz.storage.producer_append_info import AppendOrigin, ProducerStateError, VerificationGuard
from franz.storage.unified_log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    FetchIsolation,
)

logger = logging.getLogger(__name__)

# The answer of an API whose feature is off (Errors.UNSUPPORTED_VERSION's message, where the response has one).
_FEATURE_DISABLED: Final = ApiError(Errors.UNSUPPORTED_VERSION, default_message(Errors.UNSUPPORTED_VERSION))
_DESCRIBE_SHARE_GROUP_OFFSETS: Final = 90


def _log_unexpected(request: Request, schema, exc: BaseException) -> None:
    logger.error("Unexpected error handling request %s v%d (correlation id %d) from %s on connection %s",
                 schema.name, request.api_version, request.correlation_id, request.client_address[0],
                 request.connection_id, exc_info=exc)


async def _feature_disabled(request: Request, body: dict) -> dict:
    """KafkaApis' isConsumerGroupProtocolEnabled / isShareGroupProtocolEnabled refusals: each API's
    error response, except DescribeShareGroupOffsets, whose handler sets its groups' code alone."""
    answer = error_response(request.api_key, request.api_version, body, _FEATURE_DISABLED)
    if request.api_key == _DESCRIBE_SHARE_GROUP_OFFSETS:
        for group in answer["groups"]:
            group["error_message"] = None
    return answer
_SOFTWARE_NAME: Final = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
API = api_keys.SCHEMAS_BY_NAME


# Metadata answers topics asked for by id from v12 (KIP-516).
METADATA_TOPIC_IDS_MIN_VERSION: Final = 12
# Produce v13 names topics by id (KIP-516).
PRODUCE_TOPIC_IDS_MIN_VERSION: Final = 13
# From Produce v12 a transactional producer speaks transactions v2: the broker adds its partitions.
PRODUCE_ADDS_PARTITIONS_MIN_VERSION: Final = 12
_ZERO_TOPIC_ID: Final = bytes(16)
# org.apache.kafka.clients.admin.EndpointType by id (KIP-919): what DescribeCluster v1+ asks to have described.
_ENDPOINT_TYPES: Final = {1: "BROKER", 2: "CONTROLLER"}
# Sent by a transaction coordinator rather than a client: Kafka answers them exempt from request quotas.
_REQUEST_QUOTA_EXEMPT: Final = frozenset((API["WriteTxnMarkers"].api_key,))


_FETCH_KEY: Final = API["Fetch"].api_key
_PRODUCE_KEY: Final = API["Produce"].api_key
_ADD_PARTITIONS_TO_TXN_KEY: Final = API["AddPartitionsToTxn"].api_key
_LIST_CONFIG_RESOURCES_KEY: Final = API["ListConfigResources"].api_key


def _fetch_replica_id(version: int, body: dict) -> int:
    """The fetching replica's id (FetchRequest.replicaId): in replica_state from v15; -1 for a consumer."""
    state = body.get("replica_state") if version >= 15 else None
    return state["replica_id"] if state else body.get("replica_id", -1)


def _request_metric_names(api_key: int, version: int, body: dict) -> tuple[str, ...] | None:
    """The RequestMetrics names a request counts under where they are not just its API's name
    (RequestChannel's overrideMetricNames), else None: a Fetch also as FetchConsumer or
    FetchFollower, a verify-only AddPartitionsToTxn as AddPartitionsToTxnVerification alone, and
    ListConfigResources v0 also under its old name, ListClientMetricsResources."""
    if api_key == _FETCH_KEY:
        return ("FetchFollower" if _fetch_replica_id(version, body) >= 0 else "FetchConsumer", "Fetch")
    if api_key == _ADD_PARTITIONS_TO_TXN_KEY and version >= 4 and all(  # none at all counts too (allMatch)
            transaction["verify_only"] for transaction in body["transactions"]):
        return ("AddPartitionsToTxnVerification",)
    if api_key == _LIST_CONFIG_RESOURCES_KEY and version == 0:
        return ("ListClientMetricsResources", "ListConfigResources")
    return None


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


def _throttled_no_response(throttle_ms: int) -> Response:
    response = Response((), Response.NO_RESPONSE_KIND)
    response.throttle_ms = throttle_ms
    return response


# ListOffsets: the first version that may ask each special timestamp (ReplicaManager's
# timestampMinSupportedVersion); any other negative timestamp is unsupported at every version.
_LIST_OFFSETS_MIN_VERSION: Final = {EARLIEST_TIMESTAMP: 1, LATEST_TIMESTAMP: 1, MAX_TIMESTAMP: 7,
                                    EARLIEST_LOCAL_TIMESTAMP: 8, LATEST_TIERED_TIMESTAMP: 9,
                                    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11}


def _unknown_topic_error(name: str) -> Errors:
    """KafkaApis.getTopicMetadata without auto-creation: a name no topic may have is
    INVALID_TOPIC_EXCEPTION, any other missing topic UNKNOWN_TOPIC_OR_PARTITION."""
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return Errors.INVALID_TOPIC_EXCEPTION
    return Errors.UNKNOWN_TOPIC_OR_PARTITION


def _unverified_answer(error: Errors, version: int) -> dict:
    """The produce answer of a partition its transaction does not (or cannot) hold
    (AddPartitionsToTxnManager's handler, then ReplicaManager's postVerificationCallback):
    before v11 a partition not in the transaction is INVALID_TXN_STATE; a coordinator that
    cannot say, or (before v12) a transaction being ended, is retriable NOT_ENOUGH_REPLICAS.
    A transactions-v2 producer hears CONCURRENT_TRANSACTIONS as it is."""
    error = as_add_partitions_manager_answers(error, abortable_known=version > 10)
    if error == Errors.INVALID_TXN_STATE:
        return {"error_code": error, "error_message": "Partition was not added to the transaction"}
    if error in (Errors.NETWORK_EXCEPTION, Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE,
                 Errors.NOT_COORDINATOR) or (error == Errors.CONCURRENT_TRANSACTIONS
                                             and version < PRODUCE_ADDS_PARTITIONS_MIN_VERSION):
        return {"error_code": Errors.NOT_ENOUGH_REPLICAS, "error_message": "Unable to verify the partition has been "
                f"added to the transaction. Underlying error: {Errors(error).name}"}
    return {"error_code": error}


def _partition_produce_response(index: int, result: dict) -> dict:
    answer = dict(result)
    answer.setdefault("base_offset", -1)
    answer.setdefault("log_append_time_ms", -1)
    answer.setdefault("log_start_offset", -1)
    answer["index"] = index
    return answer


def _fetch_error(cached: CachedPartition, error: Errors) -> dict:
    """A fetch partition answered with an error and no records (FetchResponse.partitionResponse)."""
    return {"partition_index": cached.partition, "error_code": error, "high_watermark": -1,
            "last_stable_offset": -1, "log_start_offset": -1, "records": b""}


def _list_offsets_error(index: int, error: Errors) -> dict:
    """A ListOffsets partition answered with no offset (KafkaApis' buildErrorResponse)."""
    return {"partition_index": index, "error_code": error, "timestamp": -1, "offset": -1, "leader_epoch": -1}


# AdminUtils.ADMIN_CLIENT_ID: the client id whose produces may write internal topics.
ADMIN_CLIENT_ID: Final = "__admin_client"


def _key(name: str) -> int:
    return API[name].api_key


def _invalid_produce_records(version: int, records) -> dict | None:
    """The partition's answer when its records break ProduceRequest.validateRecords, else None.
    Null records pass here, as in Kafka, and are refused by the append."""
    if records is None:
        return None
    try:
        validate_records(version, records)
    except InvalidProduceRecordsError as exc:  # a PartitionResponse of the error alone, as in KafkaApis
        logger.debug("Produce records refused: %s", exc)
        return {"error_code": exc.error_code}
    return None


class KafkaApis:
    def __init__(self, config, metadata: MetadataCache, controller: Controller,
                 replica_manager: ReplicaManager, producer_ids: ProducerIdManager,
                 metrics: BrokerMetrics | None = None, auth: AuthHelper | None = None) -> None:
        self.config = config
        # the broker's authorization checks, which the handlers registered here use too
        self.auth = auth or AuthHelper()
        self.metrics = metrics or BrokerMetrics(replica_manager.broker_topic_stats)
        self.metadata = metadata
        self.controller = controller
        self.replica_manager = replica_manager
        self.alter_log_dirs = ReplicaAlterLogDirsManager(replica_manager)
        self.producer_ids = producer_ids
        self.fetch_max_bytes = config["fetch.max.bytes"]
        self.fetch_sessions = FetchSessionCache(config["max.incremental.fetch.session.cache.slots"])
        self.transaction_coordinator = None  # set by TransactionCoordinator.register
        # Internal topic name -> the coroutine function its coordinator makes it with.
        self.internal_topic_creators: dict[str, Callable[[], Awaitable[None]]] = {}
        self.group_configs = None  # GroupConfigManager, set by KafkaServer: GROUP config resources
        self.config_managers: dict = {}  # resource type -> its keeper (config_helper.describe), set by KafkaServer
        # Byte-rate quotas (their limits are set by ClientQuotaControlManager).
        self.produce_quota = ClientQuotaManager("producer_byte_rate", config["quota.window.num"],
                                                config["quota.window.size.seconds"])
        self.fetch_quota = ClientQuotaManager("consumer_byte_rate", config["quota.window.num"],
                                              config["quota.window.size.seconds"])
        # ClientRequestQuotaManager: a throttle of at most one quota window.
        self.request_quota = ClientQuotaManager("request_percentage", config["quota.window.num"],
                                                config["quota.window.size.seconds"],
                                                config["quota.window.size.seconds"] * 1000)
        self.handlers = {
            _key("ApiVersions"): self.handle_api_versions,
            _key("Metadata"): self.handle_metadata,
            _key("Produce"): self.handle_produce,
            _key("Fetch"): self.handle_fetch,
            _key("ListOffsets"): self.handle_list_offsets,
            _key("OffsetForLeaderEpoch"): self.handle_offset_for_leader_epoch,
            _key("DescribeConfigs"): self.handle_describe_configs,
            _key("DeleteRecords"): self.handle_delete_records,
            _key("InitProducerId"): self.handle_init_producer_id,
            _key("DescribeCluster"): self.handle_describe_cluster,
            _key("DescribeLogDirs"): self.handle_describe_log_dirs,
            _key("AlterReplicaLogDirs"): self.handle_alter_replica_log_dirs,
            _key("DescribeProducers"): self.handle_describe_producers,
        }

    def register(self, name: str, handler) -> None:
        """Serve one more API (the coordinators add theirs)."""
        self.handlers[_key(name)] = handler

    # -- the door ----------------------------------------------------------------

    async def handle(self, request: Request) -> Response:
        api_key, version = request.api_key, request.api_version
        handler = self.handlers.get(api_key)
        schema = api_keys.SCHEMAS.get(api_key)
        if handler is None or schema is None:
            logger.warning("Closing connection %s from %s: unknown API key %d", request.connection_id,
                           request.client_address[0], api_key)
            return CLOSE_CONNECTION
        authenticator = request.session.authenticator
        if authenticator is not None and not authenticator.complete:
            return await self._before_authentication(request, schema, handler, authenticator)
        if not schema.min_version <= version <= schema.max_version:
            return self._unsupported_version(request, schema)
        try:
            body = decode_request(api_key, version, request.body)
        except MessageDecodeError as exc:
            logger.debug("Undecodable frame: %s", bytes(request.frame).hex())
            logger.warning("Closing connection %s from %s: invalid %s request v%d: %s", request.connection_id,
                           request.client_address[0], schema.name, version, exc)
            return CLOSE_CONNECTION
        if not self.metadata.features.api_enabled(api_key):  # a feature level below what the API needs
            handler = _feature_disabled  # answered, counted and throttled as any request
        request.metric_names = _request_metric_names(api_key, version, body) or (schema.name,)
        handling(request)
        if REQUEST_LOGGER.isEnabledFor(logging.DEBUG):  # taken now: a handler may consume its records
            request.request_log = request_json(request, body)
        timed = None
        try:
            try:
                if self.request_quota.quotas_enabled and api_key not in _REQUEST_QUOTA_EXEMPT:
                    timed = Timed(handler(request, body))
                    result = await timed
                else:
                    result = await handler(request, body)
            except Exception as exc:  # noqa: BLE001 - answered as Kafka answers it (RequestHandlerHelper.handleError)
                _log_unexpected(request, schema, exc)
                result = error_response(api_key, version, body, exc)
                if result is None:  # an acks=0 produce: counted as its answer would have been
                    if api_key == _PRODUCE_KEY:  # ProduceRequest.errorCounts
                        self.metrics.request_metrics.mark_errors(schema.name, {error_code_of(exc): sum(
                            len(topic["partition_data"]) for topic in body["topic_data"])})
                    return CLOSE_CONNECTION
            request_throttle_ms = 0
            if timed is not None and not timed.taken:  # request_percentage: the handler's time
                request_throttle_ms = self._record_request_time(request, timed.ns)
            if isinstance(result, Response):
                if request_throttle_ms > result.throttle_ms:  # a copy: NO_RESPONSE and CLOSE_CONNECTION are shared
                    throttled = Response(result.chunks, result.kind)
                    throttled.throttle_ms = request_throttle_ms
                    return throttled
                return result
            if request_throttle_ms > result.get("throttle_time_ms", 0):
                result["throttle_time_ms"] = request_throttle_ms
            try:
                chunks = encode_response(api_key, version, request.correlation_id, result)
            except (ValueError, struct.error, TypeError) as exc:  # a field its writer refuses: the handler failed
                _log_unexpected(request, schema, exc)
                result = error_response(api_key, version, body, exc)
                if result is None:
                    return CLOSE_CONNECTION
                chunks = encode_response(api_key, version, request.correlation_id, result)
            # under the API's own name only (RequestChannel.updateErrorMetrics), not the override names
            self.metrics.request_metrics.mark_errors(schema.name, error_counts(api_key, version, result))
            if request.request_log is not None:
                request.response_log = response_json(request, result)
            response = Response(chunks)
            # A throttled client is answered at once and then not read from until its
            # throttle time has passed (KIP-219).
            response.throttle_ms = result.get("throttle_time_ms", 0)
            return response
        finally:
            request.response_complete_time_ns = now_ns = time.monotonic_ns()
            if not request.api_local_complete_time_ns:
                request.api_local_complete_time_ns = now_ns

    async def _before_authentication(self, request: Request, schema, handler, authenticator) -> Response:
        """A request of a SASL connection not yet authenticated, as Kafka's SaslServerAuthenticator
        takes it: outside KafkaApis, so never logged (its tokens hold passwords), counted or
        throttled. Only ApiVersions, SaslHandshake and SaslAuthenticate in their turn are served;
        anything else, or a failed handshake or authentication, fails the connection: after
        connection.failed.authentication.delay.ms it closes, answered first where Kafka answers
        (the SASL requests' errors; once handshaken, the request's own ILLEGAL_SASL_STATE). A
        re-authentication (KIP-368) comes here too, from its SaslHandshake to its completion."""
        api_key, version = request.api_key, request.api_version
        supported = schema.min_version <= version <= schema.max_version
        refusal = authenticator.refusal(api_key, schema.name)
        if refusal is None and not supported:
            if api_key == _key("ApiVersions"):
                return self._unsupported_version(request, schema)
            refusal = f"Version {version} is not supported for apiKey {schema.name}"
        body = None
        if supported and (refusal is None or authenticator.handshaken):
            try:
                body = decode_request(api_key, version, request.body)
            except MessageDecodeError as exc:
                refusal = refusal or f"Invalid {schema.name} request v{version}: {exc}"
        if refusal is not None:
            answered = authenticator.handshaken and body is not None
            await authenticator.fail()
            result = (error_response(api_key, version, body, ApiError(Errors.ILLEGAL_SASL_STATE, refusal))
                      if answered else None)
        else:
            result = await handler(request, body)
            if result is None:  # the mechanism failed as Kafka's on an unchecked exception: no answer
                logger.warning("Unexpected error from /%s (channelId=%s); closing connection: %s",
                               request.client_address[0], request.connection_id, authenticator.fault)
            elif api_key == _key("ApiVersions"):
                if result["error_code"] == Errors.NONE:
                    authenticator.api_versions_answered()
            elif result["error_code"] != Errors.NONE:  # the handshake or the mechanism refused the client
                refusal = (result.get("error_message")
                           or f"{Errors(result['error_code']).name}: {result.get('mechanisms')}")
        if refusal is not None:  # Selector: "re-" once the connection had authenticated
            logger.info("Failed %sauthentication with /%s (channelId=%s) (%s)",
                        "re-" if authenticator.successful_authentications else "", request.client_address[0],
                        request.connection_id, refusal)
        elif authenticator.complete:
            logger.debug("Successfully %sauthenticated with /%s", "re-" if authenticator.successful_authentications > 1
                         else "", request.client_address[0])
        if result is None:
            return CLOSE_CONNECTION
        response = Response(encode_response(api_key, version, request.correlation_id, result))
        response.close_after = refusal is not None
        return response

    def _unsupported_version(self, request: Request, schema) -> Response:
        logger.info("Answering UNSUPPORTED_VERSION to %s v%d from %s (supported %d-%d)", schema.name,
                    request.api_version, request.connection_id, schema.min_version, schema.max_version)
        if schema.api_key == _key("ApiVersions"):
            # Kafka reads any ApiVersions version and counts this one as any other request
            request.metric_names = (schema.name,)
            self.metrics.request_metrics.mark_errors(schema.name, {Errors.UNSUPPORTED_VERSION: 1})
            body = self._api_versions_body(Errors.UNSUPPORTED_VERSION)
            return Response(encode_response(schema.api_key, 0, request.correlation_id, body))
        if not any(field.name == "error_code" for field in schema.response):
            return CLOSE_CONNECTION
        nearest = min(max(request.api_version, schema.min_version), schema.max_version)
        body = {"error_code": Errors.UNSUPPORTED_VERSION}
        return Response(encode_response(schema.api_key, nearest, request.correlation_id, body))

    # -- discovery ---------------------------------------------------------------

    def _api_versions_body(self, error: Errors = Errors.NONE, version: int = 4) -> dict:
        rows = api_keys.advertised_ranges(set(self.handlers))
        return {"error_code": error, "throttle_time_ms": 0, **self.metadata.features.api_versions_fields(version),
                "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in rows]}

    async def handle_api_versions(self, request: Request, body: dict) -> dict:
        if request.api_version >= 3:
            for field in ("client_software_name", "client_software_version"):
                if not _SOFTWARE_NAME.fullmatch(body[field] or ""):
                    return {"error_code": Errors.INVALID_REQUEST, "api_keys": []}
            # A valid one names the connection's client (Processor: registerClientInformation).
            request.client_information = (body["client_software_name"], body["client_software_version"])
        else:
            request.client_information = UNKNOWN_CLIENT_INFORMATION
        return self._api_versions_body(version=request.api_version)

    def _brokers(self, request: Request) -> list[dict]:
        endpoint = self.metadata.endpoint_for(request.listener_name)
        return [{"node_id": self.metadata.node_id, "host": endpoint.host, "port": endpoint.port, "rack": None}]

    def _topic_metadata(self, topic: TopicMetadata) -> dict:
        return {"error_code": 0, "name": topic.name, "topic_id": topic.topic_id.bytes,
                "is_internal": topic.is_internal,
                "partitions": self.metadata.partition_metadata(topic, range(topic.num_partitions))}

    async def handle_metadata(self, request: Request, body: dict) -> dict:
        """KafkaApis.handleTopicMetadataRequest. A principal sees only the topics it may DESCRIBE:
        from an all-topics request the others are left out silently; a topic it names is
        answered TOPIC_AUTHORIZATION_FAILED before its existence is looked at, so that the answer
        does not tell whether it exists (by id: with its id, ids being no secret). A missing topic
        is auto-created only for a principal that may CREATE on the cluster or on that topic."""
        version = request.api_version
        requested = body["topics"]
        if version == 0 and not requested:
            requested = None  # v0: an empty list means all topics
        if requested is not None and version < METADATA_TOPIC_IDS_MIN_VERSION:
            # v10-11 carry topic ids in the schema but KafkaApis serves names only there.
            for entry in requested:
                if entry["name"] is None:
                    raise ApiError(Errors.INVALID_REQUEST, f"Topic name can not be null for version {version}")
                if any(entry.get("topic_id") or b""):
                    raise ApiError(Errors.INVALID_REQUEST,
                                   f"Topic IDs are not supported in requests for version {version}")
        auth = self.auth
        topics: list[dict] = []
        described: list[dict] = []  # the answers that carry their topic's authorized operations
        if requested is None:
            # the topics it may not see are left out without an audit line (logIfDenied = false)
            visible = auth.filter_by_authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                self.metadata.topics, log_if_denied=False)
            described = [self._topic_metadata(t) for t in self.metadata.topics.values() if t.name in visible]
            topics = described
        else:
            auto_create = body["allow_auto_topic_creation"] and self.config["auto.create.topics.enable"]
            names = self._named_topics(requested)
            wanted = dict.fromkeys(name for name, _ in names if name is not None)  # a set, in request order
            visible = auth.filter_by_authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)
            creatable = set(visible)  # the missing ones the principal may have auto-created
            missing = [name for name in wanted if name in visible and self.metadata.get(name) is None]
            if auto_create and missing and not auth.authorize(request, AclOperation.CREATE, ResourceType.CLUSTER,
                                                              CLUSTER_NAME, log_if_denied=False):
                creatable = visible - set(missing) | auth.filter_by_authorized(
                    request, AclOperation.CREATE, ResourceType.TOPIC, missing)
            for name, topic_id in names:
                if name is None:
                    topics.append({"error_code": Errors.UNKNOWN_TOPIC_ID, "name": None, "topic_id": topic_id,
                                   "partitions": []})
                    continue
                if name not in visible:  # by id, its id; by name, no id (Uuid.ZERO_UUID)
                    topics.append({"error_code": Errors.TOPIC_AUTHORIZATION_FAILED,
                                   "name": None if topic_id is not None else name,
                                   "topic_id": topic_id or _ZERO_TOPIC_ID, "is_internal": False, "partitions": []})
                    continue
                topic = self.metadata.get(name)
                if topic is None and auto_create and name not in creatable:
                    topics.append({"error_code": Errors.TOPIC_AUTHORIZATION_FAILED, "name": name,
                                   "topic_id": _ZERO_TOPIC_ID, "is_internal": name in INTERNAL_TOPICS,
                                   "partitions": []})
                    continue
                if topic is None:
                    topic = await self._auto_create(name) if auto_create else _unknown_topic_error(name)
                if isinstance(topic, TopicMetadata):
                    answer = self._topic_metadata(topic)
                else:
                    answer = {"error_code": topic if topic is not None else Errors.UNKNOWN_TOPIC_OR_PARTITION,
                              "name": name, "partitions": []}
                topics.append(answer)
                described.append(answer)
        answer = {"throttle_time_ms": 0, "brokers": self._brokers(request), "cluster_id": self.metadata.cluster_id,
                  "controller_id": self.metadata.node_id, "topics": topics}
        if version >= 8:
            if body["include_topic_authorized_operations"]:
                for topic in described:
                    topic["topic_authorized_operations"] = auth.authorized_operations(request, "topic", topic["name"])
            if version <= 10 and body["include_cluster_authorized_operations"]:
                answer["cluster_authorized_operations"] = self._cluster_authorized_operations(request)
        return answer

    def _named_topics(self, requested: list[dict]) -> list[tuple[str | None, bytes | None]]:
        """The topics a Metadata request names, each once, as (name, topic id when named by id;
        no name for an unknown id). Kafka takes the non-zero ids as a set and, when there is one,
        answers only them, the entries naming topics by name going unanswered; else the names
        as a set. A non-zero id names the topic whatever the name field holds (the Java client
        sends "" with ids: MetadataRequest.Builder.forTopicIds)."""
        ids = dict.fromkeys(bytes(entry["topic_id"]) for entry in requested if any(entry["topic_id"]))
        if ids:
            return [(self.metadata.name_of(topic_id), topic_id) for topic_id in ids]
        # a null name with no id is answered as an unknown id (Kafka's set would hold null)
        return [(name, None) if name is not None else (None, _ZERO_TOPIC_ID)
                for name in dict.fromkeys(entry["name"] for entry in requested)]

    def _cluster_authorized_operations(self, request: Request) -> int:
        """Metadata v8-10's and DescribeCluster's: nothing to one that may not DESCRIBE the cluster."""
        if not self.auth.authorize(request, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
            return 0
        return self.auth.authorized_operations(request, "cluster", CLUSTER_NAME)

    async def _auto_create(self, name: str) -> TopicMetadata | Errors:
        being_created = await self.controller.wait_for_creation(name)
        if being_created is not None:
            return being_created
        internal = self.internal_topic_creators.get(name)
        if internal is not None:  # made as its coordinator makes it (AutoTopicCreationManager)
            await internal()
            return self.metadata.get(name) or Errors.LEADER_NOT_AVAILABLE
        if (invalid := _unknown_topic_error(name)) == Errors.INVALID_TOPIC_EXCEPTION:
            return invalid
        try:
            count, overrides = self.controller.validate_new_topic(name, -1, -1, [], {})
            return await self.controller.create_topic(name, count, overrides)
        except ApiError:  # whatever else the controller refuses, the client hears the topic is not there
            return Errors.UNKNOWN_TOPIC_OR_PARTITION  # (AutoTopicCreationManager)

    async def handle_describe_cluster(self, request: Request, body: dict) -> dict:
        """AuthHelper.computeDescribeClusterResponse for a broker's endpoint. A request for another
        type (v1+; v0 always means brokers) is answered with an error alone, before any check:
        UNSUPPORTED_ENDPOINT_TYPE for an unknown one, MISMATCHED_ENDPOINT_TYPE for controllers,
        what the Java admin client asks for when given bootstrap.controllers."""
        asked = _ENDPOINT_TYPES.get(body["endpoint_type"])
        if asked is None:
            return {"error_code": Errors.UNSUPPORTED_ENDPOINT_TYPE,
                    "error_message": f"Unsupported endpoint type {body['endpoint_type']}"}
        if asked != "BROKER":
            return {"error_code": Errors.MISMATCHED_ENDPOINT_TYPE,
                    "error_message": f"The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                                     f"of type {asked}"}
        return {"error_code": 0, "endpoint_type": 1, "cluster_id": self.metadata.cluster_id,
                "controller_id": self.metadata.node_id, "brokers": [
                    {"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": None}
                    for b in self._brokers(request)],
                "cluster_authorized_operations": self._cluster_authorized_operations(request)
                if body["include_cluster_authorized_operations"] else api_keys.AUTHORIZED_OPERATIONS_OMITTED}

    # -- produce -----------------------------------------------------------------

    async def handle_produce(self, request: Request, body: dict) -> Any:
        acks = body["acks"]
        entries: dict[tuple[str, int], Any] = {}
        results: dict[tuple[str, int], dict] = {}
        # Errors of the whole request (KafkaApis answers them through getErrorResponse): every
        # partition gets the error. Transactional batches need a transactional id the principal
        # may WRITE (and a coordinator to own it); finding them may meet a corrupt first batch.
        request_error = None
        transactional_id = body["transactional_id"]
        try:
            if has_transactional_records(body["topic_data"]) and (
                    transactional_id is None or self.transaction_coordinator is None
                    or not self.auth.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                               transactional_id)):
                request_error = {"error_code": Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
        except InvalidProduceRecordsError as error:
            request_error = {"error_code": error.error_code, "error_message": str(error)}
        # Only Kafka's own admin client may write to __consumer_offsets or __transaction_state.
        internal_allowed = request.client_id == ADMIN_CLIENT_ID
        # From v13 topics are named by id (KIP-516): an id this broker does not know is
        # UNKNOWN_TOPIC_ID, answered under that id; the others are answered under their own.
        uses_topic_ids = request.api_version >= PRODUCE_TOPIC_IDS_MIN_VERSION
        topic_ids: dict[str, bytes] = {}
        unknown_ids: dict[bytes, list[int]] = {}
        # WRITE on each topic, asked once per topic however many of its partitions are named,
        # before its existence is looked at (so an unauthorized producer cannot probe for topics)
        named = [self.metadata.name_of(bytes(topic["topic_id"])) if uses_topic_ids else topic["name"]
                 for topic in body["topic_data"]]
        writable = self.auth.filter_by_authorized(request, AclOperation.WRITE, ResourceType.TOPIC,
                                                  [name for name in named if name is not None])
        for topic in body["topic_data"]:
            name = topic["name"]
            if uses_topic_ids:
                topic_id = bytes(topic["topic_id"])
                name = self.metadata.name_of(topic_id)
                if name is None:
                    unknown_ids.setdefault(topic_id, []).extend(p["index"] for p in topic["partition_data"])
                    continue
                topic_ids[name] = topic_id
            for partition in topic["partition_data"]:
                key = (name, partition["index"])
                if request_error is not None:
                    results[key] = request_error
                elif name not in writable:
                    results[key] = {"error_code": Errors.TOPIC_AUTHORIZATION_FAILED}
                elif not self.metadata.has_partition(*key):
                    results[key] = {"error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION}
                elif (invalid := _invalid_produce_records(request.api_version, partition["records"])) is not None:
                    results[key] = invalid
                elif acks not in (-1, 0, 1):  # checked by the append, after the request's own checks
                    results[key] = {"error_code": Errors.INVALID_REQUIRED_ACKS}
                elif key[0] in INTERNAL_TOPICS and not internal_allowed:
                    # refused where ReplicaManager.appendToLocalLog refuses it, after counting it
                    self.replica_manager.broker_topic_stats.mark(key[0], "TotalProduceRequestsPerSec")
                    results[key] = {"error_code": Errors.INVALID_TOPIC_EXCEPTION}
                else:
                    entries[key] = partition["records"]
        guards = None
        if entries and body["transactional_id"] is not None and self._verifies_transactions(request.api_version):
            try:
                guards, refused = await self._start_transaction_verification(request.api_version,
                                                                             body["transactional_id"], entries)
            except InvalidProduceRecordsError as error:  # the whole request (ReplicaManager.handleProduceAppend)
                refused = dict.fromkeys(results.keys() | entries.keys(),
                                        {"error_code": error.error_code, "error_message": str(error)})
            for key, refusal in refused.items():
                entries.pop(key, None)
                results[key] = refusal
        if entries:
            replica_manager = self.replica_manager
            if replica_manager.can_append_on_loop(entries):
                appended = replica_manager.append_records_on_loop(acks, entries, guards)
            else:
                appended = await replica_manager.run_on_append_thread(replica_manager.append_records, acks, entries,
                                                                      AppendOrigin.CLIENT, guards)
            results.update(appended)
            self._record_validation_stats(request, appended)
            self.replica_manager.on_appended(entries)
            if acks == -1:
                await self.replica_manager.wait_for_acks(body["timeout_ms"], appended)
        throttle_ms = 0
        if self.produce_quota.quotas_enabled:
            throttle_ms = self.produce_quota.record_and_get_throttle_time_ms(
                request.session.user, request.client_id or "", len(request.frame), _now_ms())
        unknown_id_answer = request_error or {"error_code": Errors.UNKNOWN_TOPIC_ID}
        if acks == 0:
            if unknown_ids or any(r["error_code"] for r in results.values()):
                failed = {f"{k[0]}-{k[1]}": Errors(r["error_code"]).name for k, r in results.items()
                          if r["error_code"]}
                failed.update((f"{uuid.UUID(bytes=topic_id)}-{index}", Errors(unknown_id_answer["error_code"]).name)
                              for topic_id, indexes in unknown_ids.items() for index in indexes)
                logger.info("Closing connection %s: acks=0 produce failed: %s", request.connection_id, failed)
                # counted as the answer it does not get would have been (RequestChannel.closeConnection)
                counts = collections.Counter(result["error_code"] for result in results.values())
                counts[unknown_id_answer["error_code"]] += sum(map(len, unknown_ids.values()))
                self.metrics.request_metrics.mark_errors("Produce", +counts)
                return CLOSE_CONNECTION
            return _throttled_no_response(throttle_ms) if throttle_ms else NO_RESPONSE
        by_topic: dict[str, list] = {}
        for (name, index), result in results.items():
            by_topic.setdefault(name, []).append(_partition_produce_response(index, result))
        responses = [{"name": name, "topic_id": topic_ids.get(name, _ZERO_TOPIC_ID), "partition_responses": answers}
                     for name, answers in by_topic.items()]
        responses.extend({"name": "", "topic_id": topic_id,
                          "partition_responses": [_partition_produce_response(index, unknown_id_answer)
                                                  for index in indexes]}
                         for topic_id, indexes in unknown_ids.items())
        return {"responses": responses, "throttle_time_ms": throttle_ms}

    def _verifies_transactions(self, version: int) -> bool:
        """Transactions-v2 producers (Produce v12+) always have their partitions added by the
        broker; v1 ones are verified when transaction.partition.verification.enable is on."""
        return self.transaction_coordinator is not None and (
            version >= PRODUCE_ADDS_PARTITIONS_MIN_VERSION
            or self.replica_manager.log_manager.producer_state_config.transaction_verification_enabled)

    async def _start_transaction_verification(
            self, version: int, transactional_id: str, entries: dict
    ) -> tuple[dict[tuple[str, int], VerificationGuard], dict[tuple[str, int], dict]]:
        """KIP-890: before a transactional batch may open a transaction in a partition, the
        coordinator must hold that partition in the producer's transaction
        (ReplicaManager.maybeSendPartitionsToTransactionCoordinator). A v1 producer (Produce
        v3-11) added it itself and the coordinator is asked to verify that; for a v2 producer
        (v12+, KIP-890 part 2) the broker asks the coordinator to add it. The guard of each
        partition is made first, so that a marker written while the coordinator is asked
        clears it and the append is refused. Returns the guards of the partitions that may
        append and the answers of those that may not; raises InvalidProduceRecordsError for
        the whole request when its transactional batches come from more than one producer."""
        producers = {}
        for key, records in entries.items():
            producer = transactional_producer(records)
            if producer is not None:
                producers[key] = producer
        if not producers:
            return {}, {}
        identities = {(producer_id, epoch) for producer_id, epoch, _ in producers.values()}
        if len(identities) > 1:
            raise InvalidProduceRecordsError(Errors.INVALID_PRODUCER_ID_MAPPING,
                                             "Transactional records contained more than one producer ID")
        guards: dict[tuple[str, int], VerificationGuard] = {}
        refused: dict[tuple[str, int], dict] = {}
        adds = version >= PRODUCE_ADDS_PARTITIONS_MIN_VERSION
        for key, (producer_id, epoch, sequence) in producers.items():
            partition = self.replica_manager.get_partition(*key)
            if partition is None:
                refused[key] = {"error_code": Errors.NOT_LEADER_OR_FOLLOWER}
                continue
            try:
                guard = partition.log.maybe_start_transaction_verification(producer_id, sequence, epoch, adds)
            except ProducerStateError as error:
                refused[key] = {"error_code": error.error_code}
                continue
            if guard is not VerificationGuard.SENTINEL:  # SENTINEL: its transaction is open there already
                guards[key] = guard
        if guards:
            (producer_id, epoch), = identities
            if adds:
                added = await self.transaction_coordinator.add_partitions(transactional_id, producer_id, epoch,
                                                                          set(guards), TV_2)
                verified = dict.fromkeys(guards, added)
            else:
                verified = self.transaction_coordinator.verify_partitions(transactional_id, producer_id, epoch,
                                                                          list(guards))
            for key, error in verified.items():
                if error != Errors.NONE:
                    del guards[key]
                    refused[key] = _unverified_answer(error, version)
        return guards, refused

    # -- fetch -------------------------------------------------------------------

    async def handle_fetch(self, request: Request, body: dict) -> dict:
        version = request.api_version
        isolation = FetchIsolation.TXN_COMMITTED if body["isolation_level"] == 1 else FetchIsolation.HIGH_WATERMARK
        uses_topic_ids = version >= TOPIC_IDS_MIN_VERSION
        requested: dict[tuple, CachedPartition] = {}  # a partition named twice counts once, where first named
        for topic in body["topics"]:
            name, topic_id, topic_uuid = self._fetch_topic(uses_topic_ids, topic)
            topic_key = topic_id if uses_topic_ids else name  # CachedPartition.key, inline: once per topic
            for partition in topic["partitions"]:
                index = partition["partition"]
                requested[(topic_key, index)] = CachedPartition(
                    name, index, topic_id, partition["fetch_offset"], partition["partition_max_bytes"],
                    partition["current_leader_epoch"], partition["last_fetched_epoch"], topic_uuid)
        if uses_topic_ids:  # an id this broker does not know is forgotten all the same
            forgotten = [(bytes(topic["topic_id"]), index) for topic in body["forgotten_topics_data"]
                         for index in topic["partitions"]]
        else:
            forgotten = [(topic["topic"], index) for topic in body["forgotten_topics_data"]
                         for index in topic["partitions"]]
        if version >= 7:
            context = self.fetch_sessions.new_context(version, body["session_id"], body["session_epoch"],
                                                      list(requested.values()), forgotten, _now_ms())
        else:
            context = FetchContext(partitions=list(requested.values()))
        if context.error != Errors.NONE:
            return {"throttle_time_ms": 0, "error_code": context.error, "session_id": 0, "responses": []}
        # A session partition of a topic id unknown until now is named when the topic appears
        # (CachedPartition.maybeResolveUnknownName); until then it is answered UNKNOWN_TOPIC_ID.
        read = context.partitions
        unknown_ids: list[CachedPartition] = []
        if uses_topic_ids:
            for cached in read:
                if cached.topic is None and context.incremental:
                    cached.topic = self.metadata.name_of(cached.topic_id)
        # Every partition of the fetch, a session's included, is authorized again on every fetch
        # (KIP-227 sessions keep no grant): a follower needs CLUSTER_ACTION, or each of its
        # partitions (an unknown topic id's too) is TOPIC_AUTHORIZATION_FAILED; a consumer needs
        # READ on each topic. Refused partitions are not read, and answered among the errors.
        unauthorized: list[CachedPartition] = []
        if _fetch_replica_id(version, body) >= 0:
            if not self.auth.authorize_cluster(request, AclOperation.CLUSTER_ACTION):
                unauthorized, read = read, []
        elif self.auth.enabled:
            readable = self.auth.filter_by_authorized(request, AclOperation.READ, ResourceType.TOPIC,
                                                      [cached.topic for cached in read if cached.topic is not None])
            unauthorized = [cached for cached in read if cached.topic is not None and cached.topic not in readable]
            if unauthorized:
                read = [cached for cached in read if cached.topic is None or cached.topic in readable]
        if uses_topic_ids:
            unknown_ids = [cached for cached in read if cached.topic is None]
            if unknown_ids:
                read = [cached for cached in read if cached.topic is not None]
        fetches = [PartitionFetch(c.topic, c.partition, c.fetch_offset, c.partition_max_bytes, c.current_leader_epoch,
                                  c.last_fetched_epoch, c.topic_uuid) for c in read]
        max_bytes = min(body["max_bytes"], self.fetch_max_bytes)
        min_bytes = body["min_bytes"]
        if self.fetch_quota.quotas_enabled:  # no bigger than the client's quota could ever let through
            window_bytes = self.fetch_quota.max_value_in_quota_window(request.session.user, request.client_id or "")
            if window_bytes is not None:
                max_bytes = min(max_bytes, int(window_bytes))
        min_bytes = min(min_bytes, max_bytes)  # a response can never hold more than max_bytes
        await self.replica_manager.fetch_messages(fetches, isolation, max_bytes, min_bytes, body["max_wait_ms"])
        if version < 10:
            self._refuse_zstd_to_old_fetchers(fetches)
        incremental = context.incremental
        if incremental and context.session.epoch != context.expected_epoch:
            # Another request of this session came first while this one waited: this answer is stale.
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_FETCH_SESSION_EPOCH,
                    "session_id": context.session.session_id, "responses": []}
        if self.fetch_quota.quotas_enabled or self.request_quota.quotas_enabled:
            throttle_ms = self._fetch_throttle(request, sum(fetch.size_bytes for fetch in fetches))
            if throttle_ms:  # answered empty (FetchContext.getThrottledResponse): the records wait
                session_id = context.session.session_id if incremental else 0
                return {"throttle_time_ms": throttle_ms, "error_code": 0, "session_id": session_id, "responses": []}
        session_id = 0
        if context.new_session_wanted:
            session_id = self.fetch_sessions.create_session(context, _now_ms())
        elif incremental:
            session_id = context.session.session_id
            context.session.served_last([cached for cached, fetch in zip(read, fetches) if fetch.size_bytes])
        # Partitions that were read come first, in session order; then those that could not be
        # (KafkaApis' erroneous partitions: a topic or partition this broker does not have).
        # Only a session keeps what each partition last answered; a sessionless fetch (every
        # librdkafka consumer's: it names all its partitions each time) answers them all.
        in_session = incremental or context.new_session_wanted
        bytes_out: dict[str, int] = {}  # BytesOutPerSec: what the answer carries, 0 included
        responses: list[dict] = []
        erroneous: list[tuple[CachedPartition, dict]] = []
        last_topic = last_id = last_partitions = None
        for cached, fetch in zip(read, fetches):
            answer = {"partition_index": fetch.partition, "error_code": fetch.error,
                      "high_watermark": fetch.high_watermark, "last_stable_offset": fetch.last_stable_offset,
                      "log_start_offset": fetch.log_start_offset, "aborted_transactions": fetch.aborted,
                      "preferred_read_replica": -1, "records": fetch.records}
            if fetch.error == Errors.UNKNOWN_TOPIC_OR_PARTITION:
                erroneous.append((cached, answer))
                continue
            if fetch.diverging_epoch is not None:
                answer["diverging_epoch"] = {"epoch": fetch.diverging_epoch[0], "end_offset": fetch.diverging_epoch[1]}
            if in_session and not cached.needs_response(fetch.error, fetch.size_bytes, fetch.high_watermark,
                                                        fetch.last_stable_offset, fetch.log_start_offset,
                                                        fetch.diverging_epoch is not None) and incremental:
                continue
            if cached.topic != last_topic or cached.topic_id != last_id:  # merged only with the topic before
                last_topic, last_id, last_partitions = cached.topic, cached.topic_id, []
                responses.append({"topic": cached.topic, "topic_id": cached.topic_id, "partitions": last_partitions})
            last_partitions.append(answer)
            bytes_out[fetch.topic] = bytes_out.get(fetch.topic, 0) + fetch.size_bytes
        for cached in unauthorized:
            erroneous.append((cached, _fetch_error(cached, Errors.TOPIC_AUTHORIZATION_FAILED)))
        for cached in unknown_ids:
            erroneous.append((cached, _fetch_error(cached, Errors.UNKNOWN_TOPIC_ID)))
        for cached, answer in erroneous:  # errors always answer (and forget the cached high watermark)
            if cached.topic is not None:
                bytes_out.setdefault(cached.topic, 0)
            if in_session:
                cached.needs_response(answer["error_code"], 0, -1, -1, -1)
            if last_partitions is None or cached.topic != last_topic or cached.topic_id != last_id:
                last_topic, last_id, last_partitions = cached.topic, cached.topic_id, []
                responses.append({"topic": cached.topic or "", "topic_id": cached.topic_id,
                                  "partitions": last_partitions})
            last_partitions.append(answer)
        self.replica_manager.broker_topic_stats.mark_topics("BytesOutPerSec", bytes_out)
        return {"throttle_time_ms": 0, "error_code": 0, "session_id": session_id, "responses": responses}

    def _record_validation_stats(self, request: Request, appended: dict[tuple[str, int], dict]) -> None:
        """What validating a client's batches cost (KafkaApis.processingStatsCallback): rebuilt
        records counted as conversions of their topic, and the request's conversion time and
        temporary memory (summed over its partitions, where Kafka keeps the last one's)."""
        for (topic, _partition), result in appended.items():
            stats = result.pop("record_validation_stats", None)
            if stats is None:
                continue
            if stats.num_records_converted > 0:
                self.replica_manager.broker_topic_stats.mark(topic, "ProduceMessageConversionsPerSec",
                                                             stats.num_records_converted)
            request.message_conversions_time_ns += stats.conversion_time_ns
            request.temporary_memory_bytes += stats.temporary_memory_bytes

    def _refuse_zstd_to_old_fetchers(self, fetches: list[PartitionFetch]) -> None:
        """Fetch v4-9 predates zstd (KIP-110): a partition whose topic compresses with zstd is
        answered UNSUPPORTED_COMPRESSION_TYPE and no records (KafkaApis.maybeConvertFetchedData)."""
        for fetch in fetches:
            partition = self.replica_manager.get_partition(fetch.topic, fetch.partition)
            if partition is not None and partition.log.config.compression_type == "zstd":
                fetch.error = Errors.UNSUPPORTED_COMPRESSION_TYPE
                fetch.high_watermark = fetch.last_stable_offset = fetch.log_start_offset = -1
                fetch.records, fetch.size_bytes, fetch.aborted, fetch.diverging_epoch = b"", 0, None, None

    def _fetch_throttle(self, request: Request, size_bytes: int) -> int:
        """The throttle time of a fetch answering `size_bytes`, by its byte rate and by its time so
        far (KafkaApis.handleFetchRequest); a throttled fetch's bytes are taken back, since it is
        answered empty (unrecordQuotaSensor)."""
        client_id, now_ms = request.client_id or "", _now_ms()
        bandwidth_ms = 0
        if self.fetch_quota.quotas_enabled:
            bandwidth_ms = self.fetch_quota.record_and_get_throttle_time_ms(request.session.user, client_id,
                                                                            size_bytes, now_ms)
        request_ms = 0
        if self.request_quota.quotas_enabled and (ns := take_current_ns()) is not None:
            request_ms = self._record_request_time(request, ns)
        throttle_ms = max(bandwidth_ms, request_ms)
        if throttle_ms and self.fetch_quota.quotas_enabled:
            self.fetch_quota.unrecord(request.session.user, client_id, size_bytes, now_ms)
        return throttle_ms

    def _record_request_time(self, request: Request, ns: int) -> int:
        """request_percentage: `ns` of handling, in percent of one thread; the throttle time."""
        return self.request_quota.record_and_get_throttle_time_ms(request.session.user, request.client_id or "",
                                                                  ns * 100 / 1e9, _now_ms())

    def _fetch_topic(self, uses_topic_ids: bool, topic: dict) -> tuple[str | None, bytes, uuid.UUID | None]:
        """(name, topic id, expected topic id) of a fetch request topic: by name before v13
        (the id is zeros and unchecked), by id from v13 (the name None if the id is unknown)."""
        if not uses_topic_ids:
            return topic["topic"], bytes(16), None
        topic_id = bytes(topic["topic_id"])
        return self.metadata.name_of(topic_id), topic_id, uuid.UUID(bytes=topic_id)

    # -- offsets -----------------------------------------------------------------

    async def handle_list_offsets(self, request: Request, body: dict) -> dict:
        read_committed = body["isolation_level"] == 1
        # DESCRIBE on each topic (partitionSeqByAuthorized): every partition of one refused is
        # TOPIC_AUTHORIZATION_FAILED, whether the topic exists or not, answered after the others.
        described = self.auth.filter_by_authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC,
                                                   [topic["name"] for topic in body["topics"]])
        refused = [{"name": topic["name"], "partitions": [
            _list_offsets_error(entry["partition_index"], Errors.TOPIC_AUTHORIZATION_FAILED)
            for entry in topic["partitions"]]} for topic in body["topics"] if topic["name"] not in described]
        named = collections.Counter((topic["name"], entry["partition_index"]) for topic in body["topics"]
                                    for entry in topic["partitions"] if topic["name"] in described)
        # A partition named twice is answered once, INVALID_REQUEST (ReplicaManager.fetchOffset keys
        # its answers by partition).
        by_topic: dict[str, dict[int, dict]] = {}
        for topic in body["topics"]:
            name = topic["name"]
            if name not in described:
                continue
            answers = by_topic.setdefault(name, {})
            for entry in topic["partitions"]:
                index = entry["partition_index"]
                if named[name, index] > 1:
                    answers[index] = _list_offsets_error(index, Errors.INVALID_REQUEST)
                else:
                    try:
                        answers[index] = self._list_offset(name, entry, read_committed, request.api_version)
                    except KafkaStorageError:  # ReplicaManager.fetchOffset: that partition's error, logged where it was
                        answers[index] = _list_offsets_error(index, Errors.KAFKA_STORAGE_ERROR)
        return {"throttle_time_ms": 0,
                "topics": [{"name": name, "partitions": list(answers.values())}
                           for name, answers in by_topic.items()] + refused}

    def _list_offset(self, name: str, entry: dict, read_committed: bool, version: int) -> dict:
        index = entry["partition_index"]
        timestamp = entry["timestamp"]
        if timestamp < 0 and version < _LIST_OFFSETS_MIN_VERSION.get(timestamp, 1 << 15):
            return _list_offsets_error(index, Errors.UNSUPPORTED_VERSION)  # a special timestamp this version predates
        partition = self.replica_manager.get_partition(name, index)
        if partition is None:
            return _list_offsets_error(index, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        if partition.log.offline:  # getPartitionOrException: an offline partition, whatever the timestamp
            return _list_offsets_error(index, Errors.KAFKA_STORAGE_ERROR)
        error = partition.check_current_leader_epoch(entry["current_leader_epoch"])
        if error != Errors.NONE:
            return _list_offsets_error(index, error)
        answer = _list_offsets_error(index, Errors.NONE)
        log = partition.log
        fetchable = log.last_stable_offset if read_committed else log.high_watermark
        if timestamp == LATEST_TIMESTAMP:  # with the partition's leader epoch (Partition.fetchOffsetForTimestamp)
            answer["offset"] = fetchable
            answer["leader_epoch"] = partition.leader_epoch
            return answer
        found = log.fetch_offset_by_timestamp(timestamp)
        if found is not None and (timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP)
                                  or found.offset < fetchable):
            answer["timestamp"] = found.timestamp
            answer["offset"] = found.offset
            answer["leader_epoch"] = found.leader_epoch if found.leader_epoch is not None else -1
        return answer

    async def handle_describe_producers(self, request: Request, body: dict) -> dict:
        """KafkaApis.handleDescribeProducersRequest: the producer state of each partition's log."""
        topics = []
        for topic in body["topics"]:
            partitions = []
            # A legal name first (its InvalidTopicException's message), then READ on the topic
            # (Kafka's message for it: the error's own), before its existence is looked at.
            topic_error = None
            try:
                validate_topic_name(topic["name"])
            except InvalidTopicError as exc:
                topic_error = (Errors.INVALID_TOPIC_EXCEPTION, str(exc))
            else:
                if not self.auth.authorize(request, AclOperation.READ, ResourceType.TOPIC, topic["name"]):
                    refused = Errors.TOPIC_AUTHORIZATION_FAILED
                    topic_error = (refused, default_message(refused))
            for index in topic["partition_indexes"]:
                answer: dict = {"partition_index": index, "error_code": Errors.NONE, "error_message": None,
                                "active_producers": []}
                partition = self.replica_manager.get_partition(topic["name"], index)
                if topic_error is not None:
                    answer["error_code"], answer["error_message"] = topic_error
                elif partition is None:
                    answer["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif partition.log.offline:  # ReplicaManager.getPartitionOrError: HostedPartition.Offline
                    answer["error_code"] = Errors.KAFKA_STORAGE_ERROR
                else:
                    answer["active_producers"] = [producer._asdict() for producer in partition.log.active_producers()]
                partitions.append(answer)
            topics.append({"name": topic["name"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    async def handle_offset_for_leader_epoch(self, request: Request, body: dict) -> dict:
        # A replica asks with CLUSTER_ACTION; a consumer (KIP-320) with DESCRIBE on each topic,
        # every partition of a topic refused answered TOPIC_AUTHORIZATION_FAILED after the others.
        names = [topic["topic"] for topic in body["topics"]]
        if self.auth.authorize(request, AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME,
                               log_if_denied=False):
            described = set(names)
        else:
            described = self.auth.filter_by_authorized(request, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
        topics = []
        refused = [{"topic": topic["topic"], "partitions": [
            {"partition": entry["partition"], "error_code": Errors.TOPIC_AUTHORIZATION_FAILED, "leader_epoch": -1,
             "end_offset": -1} for entry in topic["partitions"]]}
            for topic in body["topics"] if topic["topic"] not in described]
        for topic in body["topics"]:
            if topic["topic"] not in described:
                continue
            partitions = []
            for entry in topic["partitions"]:
                index = entry["partition"]
                answer = {"partition": index, "error_code": 0, "leader_epoch": -1, "end_offset": -1}
                partition = self.replica_manager.get_partition(topic["topic"], index)
                if partition is None:
                    answer["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif partition.log.offline:  # ReplicaManager.lastOffsetForLeaderEpoch: HostedPartition.Offline
                    answer["error_code"] = Errors.KAFKA_STORAGE_ERROR
                elif (error := partition.check_current_leader_epoch(entry["current_leader_epoch"])) != Errors.NONE:
                    answer["error_code"] = error
                else:
                    log = partition.log
                    epoch, end = log.leader_epoch_cache.end_offset_for(entry["leader_epoch"], log.log_end_offset)
                    answer["leader_epoch"], answer["end_offset"] = epoch, end
                partitions.append(answer)
            topics.append({"topic": topic["topic"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics + refused}

    async def handle_delete_records(self, request: Request, body: dict) -> dict:
        # DELETE on each topic, refused before the topic's existence is looked at
        deletable = self.auth.filter_by_authorized(request, AclOperation.DELETE, ResourceType.TOPIC,
                                                   [topic["name"] for topic in body["topics"]])
        topics = []
        for topic in body["topics"]:
            partitions = []
            for entry in topic["partitions"]:
                index = entry["partition_index"]
                answer = {"partition_index": index, "low_watermark": -1, "error_code": 0}
                partition = self.replica_manager.get_partition(topic["name"], index)
                if topic["name"] not in deletable:
                    answer["error_code"] = Errors.TOPIC_AUTHORIZATION_FAILED
                elif partition is None:
                    answer["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION
                elif topic["name"] in INTERNAL_TOPICS:  # ReplicaManager.deleteRecordsOnLocalLog
                    answer["error_code"] = Errors.INVALID_TOPIC_EXCEPTION
                elif not partition.log.config.delete:
                    # Partition.deleteRecordsOnLeader: only a policy with delete lets clients delete records.
                    answer["error_code"] = Errors.POLICY_VIOLATION
                else:
                    log = partition.log
                    offset = entry["offset"]
                    offset = log.high_watermark if offset == -1 else offset
                    try:
                        if offset < 0:
                            raise OffsetOutOfRangeError(f"offset {offset}")
                        log = self.replica_manager.increment_log_start_offset(
                            (topic["name"], index), offset, "client delete records request") or log
                        answer["low_watermark"] = log.log_start_offset
                    except OffsetOutOfRangeError:
                        answer["error_code"] = Errors.OFFSET_OUT_OF_RANGE
                    except KafkaStorageError:  # ReplicaManager.deleteRecordsOnLocalLog: that partition's error
                        answer["error_code"] = Errors.KAFKA_STORAGE_ERROR
                partitions.append(answer)
            topics.append({"name": topic["name"], "partitions": partitions})
        return {"throttle_time_ms": 0, "topics": topics}

    # -- producers ---------------------------------------------------------------

    async def handle_init_producer_id(self, request: Request, body: dict) -> dict:
        # Authorized first: a transactional producer by WRITE on its transactional id; an
        # idempotent one by IDEMPOTENT_WRITE on the cluster (its refusal not logged) or else by
        # WRITE on some topic (KIP-679: Authorizer.authorizeByResourceType).
        transactional_id = body["transactional_id"]
        if transactional_id is not None:
            if not self.auth.authorize(request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
                return refusal_response(request, body, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        elif not (self.auth.authorize(request, AclOperation.IDEMPOTENT_WRITE, ResourceType.CLUSTER, CLUSTER_NAME,
                                      log_if_denied=False)
                  or self.auth.authorize_by_resource_type(request, AclOperation.WRITE, ResourceType.TOPIC)):
            return refusal_response(request, body, Errors.CLUSTER_AUTHORIZATION_FAILED)
        # A producer id without an epoch, or an epoch without an id, is no producer (KafkaApis).
        if (body["producer_id"] == -1) != (body["producer_epoch"] == -1):
            return {"throttle_time_ms": 0, "error_code": Errors.INVALID_REQUEST, "producer_id": -1,
                    "producer_epoch": -1}
        if body["transactional_id"] is not None:
            coordinator = self.transaction_coordinator
            if coordinator is None:
                return {"error_code": Errors.COORDINATOR_NOT_AVAILABLE, "producer_id": -1, "producer_epoch": -1}
            producer_id, epoch, error = await coordinator.init_producer_id(
                body["transactional_id"], body["transaction_timeout_ms"], body["producer_id"],
                body["producer_epoch"])
            if request.api_version < 4 and error == Errors.PRODUCER_FENCED:
                error = Errors.INVALID_PRODUCER_EPOCH  # older clients do not know PRODUCER_FENCED
            return {"throttle_time_ms": 0, "error_code": error, "producer_id": producer_id, "producer_epoch": epoch}
        loop = asyncio.get_running_loop()
        producer_id, epoch = await loop.run_in_executor(
            None, self.producer_ids.init_producer_id, body["producer_id"], body["producer_epoch"])
        return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id, "producer_epoch": epoch}

    # -- configs -----------------------------------------------------------------

    async def handle_describe_configs(self, request: Request, body: dict) -> dict:
        authorized = config_helper.authorization(self.auth, request, DESCRIBE_CONFIGS)
        return {"throttle_time_ms": 0, "results": config_helper.describe_all(
            self.controller, self.config, body, request.api_version, self.config_managers, authorized)}

    # -- log dirs ----------------------------------------------------------------

    async def handle_alter_replica_log_dirs(self, request: Request, body: dict) -> dict:
        """KafkaApis.handleAlterReplicaLogDirsRequest: each partition moved to the dir named for it
        (franz.server.replica_alter_log_dirs), answered per topic; only by one that may ALTER the
        cluster, or every partition is CLUSTER_AUTHORIZATION_FAILED."""
        if not self.auth.authorize_cluster(request, AclOperation.ALTER):
            return refusal_response(request, body, Errors.CLUSTER_AUTHORIZATION_FAILED)
        destinations = {(topic["name"], index): directory["path"]
                        for directory in body["dirs"] for topic in directory["topics"] for index in topic["partitions"]}
        errors = await self.alter_log_dirs.alter_replica_log_dirs(destinations)
        by_topic: dict[str, list] = {}
        for (name, index), error in errors.items():
            by_topic.setdefault(name, []).append({"partition_index": index, "error_code": error})
        return {"throttle_time_ms": 0,
                "results": [{"topic_name": name, "partitions": partitions} for name, partitions in by_topic.items()]}

    async def handle_describe_log_dirs(self, request: Request, body: dict) -> dict:
        if not self.auth.authorize_cluster(request, AclOperation.DESCRIBE):  # no dirs, the request's error
            return {"throttle_time_ms": 0, "error_code": Errors.CLUSTER_AUTHORIZATION_FAILED, "results": []}
        wanted = None
        if body["topics"] is not None:
            wanted = {(t["topic"], p) for t in body["topics"] for p in t["partitions"]}
        log_manager = self.replica_manager.log_manager
        results = []
        # A replica being moved shows twice: its current log, and its future log in the dir it
        # moves to, whose lag is how far it is behind the current one (getLogEndOffsetLag).
        logs = [(tp, log, False) for tp, log in sorted(log_manager.logs.items())]
        logs += [(tp, log, True) for tp, log in sorted(log_manager.future_logs.items())]
        for log_dir in log_manager.log_dirs:
            topics: dict[str, list] = {}
            for (name, index), log, future in logs:
                if log.dir.parent != log_dir or (wanted is not None and (name, index) not in wanted):
                    continue
                current = log_manager.get_log(name, index) if future else log
                if current is None:
                    lag = -1  # DescribeLogDirsResponse.INVALID_OFFSET_LAG
                elif future:
                    lag = current.log_end_offset - log.log_end_offset
                else:
                    lag = max(log.high_watermark - log.log_end_offset, 0)
                topics.setdefault(name, []).append({"partition_index": index, "partition_size": log.size(),
                                                    "offset_lag": lag, "is_future_key": future})
            usage = shutil.disk_usage(log_dir)
            results.append({"error_code": 0, "log_dir": str(log_dir), "total_bytes": usage.total,
                            "usable_bytes": usage.free,
                            "topics": [{"name": n, "partitions": p} for n, p in topics.items()]})
        return {"throttle_time_ms": 0, "error_code": 0, "results": results}

