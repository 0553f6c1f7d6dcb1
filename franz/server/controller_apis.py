"""ControllerApis: the APIs a Kafka 4.x broker forwards to its KRaft controller
(kafka.server.ControllerApis): topics (CreateTopics, DeleteTopics, CreatePartitions),
configs (IncrementalAlterConfigs, AlterConfigs), leaders and reassignments.

franz's controller runs inside the broker (franz.server.controller), so these
are answered here rather than forwarded. The partition mutations of topics
count against the client's controller_mutation_rate quota
(franz.server.controller_mutation_quota), strictly for the request versions
that know THROTTLING_QUOTA_EXCEEDED. Describing configs stays with the broker
(KafkaApis, through config_helper), as in Kafka.

Authorization is ControllerApis': CreateTopics needs CREATE on the cluster, else
on each topic (TOPIC_AUTHORIZATION_FAILED, "Authorization failed."), and returns a
created topic's configs only to a principal that may DESCRIBE_CONFIGS it;
DeleteTopics needs DELETE on the cluster or the topic, and a principal that may
not DESCRIBE a topic learns nothing of it (neither whether it exists nor the name
of its id); CreatePartitions needs ALTER on each topic; the config alterations
ALTER_CONFIGS on the resource (config_helper); ElectLeaders,
AlterPartitionReassignments and UnregisterBroker ALTER on the cluster,
ListPartitionReassignments DESCRIBE, ListConfigResources DESCRIBE_CONFIGS.
"""

from __future__ import annotations

import collections
import logging
from typing import Any, Final

from franz.protocol.errors import Errors, default_message
from franz.server import config_helper
from franz.server.auth_helper import ALTER, CLUSTER_NAME, CREATE, DELETE, DESCRIBE, DESCRIBE_CONFIGS, AuthHelper
from franz.server.broker_metrics import BrokerMetrics
from franz.server.cluster_authorization import authorize_cluster_operation, cluster_authorization_failed
from franz.server.controller import ApiError, Controller
from franz.server.controller_mutation_quota import ControllerMutationQuota, ControllerMutationQuotaManager
from franz.server.metadata_cache import MetadataCache, TopicMetadata
from franz.server.request_channel import Request
from franz.server.standard_authorizer import ResourceType
from franz.storage.checkpoint import random_kafka_uuid

logger = logging.getLogger(__name__)

# KRaft's own log: no client may make a topic of that name.
CLUSTER_METADATA_TOPIC: Final = "__cluster_metadata"
# ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: the most partitions one CreateTopics may make.
PARTITIONS_PER_REQUEST_MAX: Final = 10_000
ELECTION_TYPE_UNCLEAN: Final = 1  # ElectionType.UNCLEAN's value (PREFERRED is 0, the only one before v1)


class ControllerApis:
    def __init__(self, config, controller: Controller, metadata: MetadataCache, replica_manager,
                 mutation_quota: ControllerMutationQuotaManager, broker_metrics: BrokerMetrics,
                 config_managers: dict | None = None) -> None:
        self.config = config
        self.controller = controller
        self.metadata = metadata
        self.replica_manager = replica_manager
        self.mutation_quota = mutation_quota
        # resource type -> keeper of GROUP / CLIENT_METRICS configs (config_helper.describe)
        self.config_managers = config_managers or {}
        self.broker_metrics = broker_metrics
        self.auth = AuthHelper()  # the broker's, once registered

    def register(self, apis) -> None:
        self.auth = apis.auth
        for name, handler in (("CreateTopics", self.handle_create_topics),
                              ("DeleteTopics", self.handle_delete_topics),
                              ("CreatePartitions", self.handle_create_partitions),
                              ("IncrementalAlterConfigs", self.handle_incremental_alter_configs),
                              ("AlterConfigs", self.handle_alter_configs),
                              ("ElectLeaders", self.handle_elect_leaders),
                              ("AlterPartitionReassignments", self.handle_alter_partition_reassignments),
                              ("ListPartitionReassignments", self.handle_list_partition_reassignments),
                              ("ListConfigResources", self.handle_list_config_resources),
                              ("UnregisterBroker", self.handle_unregister_broker)):
            apis.register(name, handler)

    def _mutation_quota(self, request: Request, strict_since_version: int) -> ControllerMutationQuota:
        return self.mutation_quota.new_quota(request.session.user, request.client_id or "",
                                             request.api_version >= strict_since_version)

    async def handle_create_topics(self, request: Request, body: dict) -> dict:
        results = []
        quota = self._mutation_quota(request, 6)
        duplicates = _duplicates(entry["name"] for entry in body["topics"])
        # ControllerApis.createTopics: the topics neither duplicated nor KRaft's own are asked
        # for CREATE (unless the cluster allows it) and DESCRIBE_CONFIGS; the others are set
        # aside before the controller sees, or counts the partitions of, the request.
        allowed = {entry["name"] for entry in body["topics"]} - set(duplicates) - {CLUSTER_METADATA_TOPIC}
        if self.auth.authorize(request, CREATE, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            authorized = allowed
        else:
            authorized = self.auth.filter_by_authorized(request, CREATE, ResourceType.TOPIC, allowed)
        describable = self.auth.filter_by_authorized(request, DESCRIBE_CONFIGS, ResourceType.TOPIC, allowed,
                                                     log_if_denied=False)
        asked = [entry for entry in body["topics"] if entry["name"] in authorized]
        if self._partitions_asked(asked, duplicates) > PARTITIONS_PER_REQUEST_MAX:
            # ReplicationControlManager.validateTotalNumberOfPartitions fails the whole request.
            return {"throttle_time_ms": 0, "topics": [
                {"name": entry["name"], "error_code": Errors.POLICY_VIOLATION,
                 "error_message": "Excessively large number of partitions per request.", "num_partitions": -1,
                 "replication_factor": -1, "configs": None} for entry in body["topics"]]}
        for entry in body["topics"]:
            name = entry["name"]
            result: dict[str, Any] = {"name": name, "error_code": 0, "error_message": None,
                                      "num_partitions": -1, "replication_factor": -1, "configs": None}
            if name in duplicates:  # ControllerApis.createTopics: answered once, made never
                if duplicates[name]:
                    duplicates[name] = False
                    results.append(result | {"error_code": Errors.INVALID_REQUEST,
                                             "error_message": "Duplicate topic name."})
                continue
            if name == CLUSTER_METADATA_TOPIC:
                results.append(result | {"error_code": Errors.INVALID_REQUEST, "error_message":
                                         f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited."})
                continue
            if name not in authorized:
                results.append(result | {"error_code": Errors.TOPIC_AUTHORIZATION_FAILED,
                                         "error_message": "Authorization failed."})
                continue
            try:
                configs = {c["name"]: c["value"] for c in entry["configs"]}
                count, overrides = self.controller.validate_new_topic(
                    name, entry["num_partitions"], entry["replication_factor"], entry["assignments"], configs)
                quota.record(count)  # validate_only too: Kafka's controller counts it either way
                if body["validate_only"]:  # answered with the id it would have had, as Kafka does
                    topic = TopicMetadata(name, random_kafka_uuid(), count, overrides)
                else:
                    topic = await self.controller.create_topic(name, count, overrides)
                result["topic_id"] = topic.topic_id.bytes
                if name in describable:
                    result.update(num_partitions=count, replication_factor=1,
                                  configs=config_helper.create_topics_configs(self.controller, name, overrides))
                else:  # ReplicationControlManager.createTopic: created, but its settings kept from the principal
                    result.update(configs=[], topic_config_error_code=Errors.TOPIC_AUTHORIZATION_FAILED)
            except ApiError as exc:
                result.update(error_code=exc.code, error_message=exc.message)
            results.append(result)
        return {"throttle_time_ms": quota.throttle_time_ms(), "topics": results}

    def _partitions_asked(self, topics: list[dict], duplicates: dict) -> int:
        """The partitions a CreateTopics request would make, as the controller counts them: a
        topic's default when -1, its assignments when given (duplicates are set aside first)."""
        total = 0
        for entry in topics:
            if entry["name"] in duplicates or entry["name"] == CLUSTER_METADATA_TOPIC:
                continue
            if entry["assignments"]:
                total += len(entry["assignments"])
            elif entry["num_partitions"] == -1:
                total += self.config["num.partitions"]
            elif entry["num_partitions"] > 0:
                total += entry["num_partitions"]
        return total

    async def handle_delete_topics(self, request: Request, body: dict) -> dict:
        if request.api_version >= 6:
            requested = [(t["name"], bytes(t["topic_id"])) for t in body["topics"]]
        else:
            requested = [(name, None) for name in body["topic_names"]]
        responses = []
        quota = self._mutation_quota(request, 5)
        # ControllerApis.deleteTopics: a topic named twice (by name or by id) is refused once,
        # and an entry must name a topic one way, not both, not neither.
        by_id = [topic_id is not None and any(topic_id) for _name, topic_id in requested]
        duplicate_names = _duplicates(name for (name, _), has_id in zip(requested, by_id) if name is not None and not has_id)
        duplicate_ids = _duplicates(topic_id for (name, topic_id), has_id in zip(requested, by_id) if name is None and has_id)
        describable, deletable = self._deletable_topics(request, requested, by_id, duplicate_names, duplicate_ids)
        for (name, topic_id), has_id in zip(requested, by_id):
            answer: dict[str, Any] = {"name": name, "topic_id": topic_id or bytes(16), "error_code": 0,
                                      "error_message": None}
            key, duplicates = (name, duplicate_names) if name is not None else (topic_id, duplicate_ids)
            refusal = None
            if name is None and not has_id:
                refusal = "Neither topic name nor id were specified."
            elif name is not None and has_id:
                refusal = "You may not specify both topic name and topic id."
            elif key in duplicates:
                if not duplicates[key]:
                    continue  # answered once already
                duplicates[key] = False
                refusal = "Duplicate topic name." if name is not None else "Duplicate topic id."
            if refusal is not None:
                responses.append(answer | {"error_code": Errors.INVALID_REQUEST, "error_message": refusal})
                continue
            if name is None:
                name = self.metadata.name_of(topic_id)
                answer["name"] = name
                if name is None:
                    answer["error_code"] = Errors.UNKNOWN_TOPIC_ID
                    responses.append(answer)
                    continue
                if name not in deletable:  # the id's name only to whom may describe it
                    responses.append(answer | {"name": name if name in describable else None,
                                               "error_code": Errors.TOPIC_AUTHORIZATION_FAILED,
                                               "error_message": default_message(Errors.TOPIC_AUTHORIZATION_FAILED)})
                    continue
            elif name not in describable or (name not in deletable and self.metadata.get(name) is not None):
                # unknown or not, the same answer to whom may not describe it
                responses.append(answer | {"error_code": Errors.TOPIC_AUTHORIZATION_FAILED,
                                           "error_message": default_message(Errors.TOPIC_AUTHORIZATION_FAILED)})
                continue
            topic = self.metadata.get(name)
            if topic is not None:
                answer["topic_id"] = topic.topic_id.bytes
            try:
                if not self.config["delete.topic.enable"]:
                    raise ApiError(Errors.TOPIC_DELETION_DISABLED, default_message(Errors.TOPIC_DELETION_DISABLED))
                if topic is not None:
                    quota.record(topic.num_partitions)
                await self.controller.delete_topic(name)
                self.broker_metrics.remove_topic(name)
                for key in [(name, index) for index in range(topic.num_partitions)]:
                    self.replica_manager.on_appended([key])  # parked fetches answer at once
            except ApiError as exc:
                answer.update(error_code=exc.code, error_message=exc.message)
            responses.append(answer)
        return {"throttle_time_ms": quota.throttle_time_ms(), "responses": responses}

    def _deletable_topics(self, request: Request, requested: list, by_id: list, duplicate_names: dict,
                          duplicate_ids: dict) -> tuple[set[str], set[str]]:
        """ControllerApis.deleteTopics: the names of the valid entries (those given by name, and the
        known ones given by id) the principal may DESCRIBE and may DELETE; DELETE on the cluster
        allows all. A name given that does not exist is answered unknown only if describable."""
        names = set()
        for (name, topic_id), has_id in zip(requested, by_id):
            if name is not None and not has_id and name not in duplicate_names:
                names.add(name)
            elif name is None and has_id and topic_id not in duplicate_ids:
                resolved = self.metadata.name_of(topic_id)
                if resolved is not None:
                    names.add(resolved)
        if self.auth.authorize(request, DELETE, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            return names, names
        return (self.auth.filter_by_authorized(request, DESCRIBE, ResourceType.TOPIC, names),
                self.auth.filter_by_authorized(request, DELETE, ResourceType.TOPIC, names))

    async def handle_create_partitions(self, request: Request, body: dict) -> dict:
        results = []
        quota = self._mutation_quota(request, 3)
        duplicates = _duplicates(entry["name"] for entry in body["topics"])
        # ControllerApis.createPartitions: ALTER on each topic, asked whether it exists or not.
        alterable = self.auth.filter_by_authorized(
            request, ALTER, ResourceType.TOPIC, {entry["name"] for entry in body["topics"]} - set(duplicates))
        for entry in body["topics"]:
            answer = {"name": entry["name"], "error_code": 0, "error_message": None}
            if entry["name"] in duplicates:
                if duplicates[entry["name"]]:
                    duplicates[entry["name"]] = False
                    results.append(answer | {"error_code": Errors.INVALID_REQUEST,
                                             "error_message": "Duplicate topic name."})
                continue
            if entry["name"] not in alterable:
                results.append(answer | {"error_code": Errors.TOPIC_AUTHORIZATION_FAILED})
                continue
            try:
                topic = self.metadata.get(entry["name"])
                if topic is not None and entry["count"] > topic.num_partitions:
                    quota.record(entry["count"] - topic.num_partitions)
                await self.controller.create_partitions(entry["name"], entry["count"], entry["assignments"],
                                                        body["validate_only"])
            except ApiError as exc:
                answer.update(error_code=exc.code, error_message=exc.message)
            results.append(answer)
        return {"throttle_time_ms": quota.throttle_time_ms(), "results": results}

    async def handle_unregister_broker(self, request: Request, body: dict) -> dict:
        """ReplicationControlManager.unregisterBroker (kafka-cluster.sh unregister): an id with no
        registration is BROKER_ID_NOT_REGISTERED. The one registered broker here is this node,
        which, unregistered, registers again as a Kafka broker does after its next heartbeat
        (the partitions it leads are leaderless meanwhile in Kafka; here there is no meanwhile)."""
        authorize_cluster_operation(self.auth, request, ALTER)
        broker_id = body["broker_id"]
        if broker_id != self.metadata.node_id:
            return {"throttle_time_ms": 0, "error_code": Errors.BROKER_ID_NOT_REGISTERED,
                    "error_message": f"Broker ID {broker_id} is not currently registered"}
        logger.info("Broker %d unregistered by request; this node registers again at once.", broker_id)
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None}

    async def handle_elect_leaders(self, request: Request, body: dict) -> dict:
        authorize_cluster_operation(self.auth, request, ALTER)
        return {"throttle_time_ms": 0, "error_code": Errors.NONE,
                "replica_election_results": self.controller.elect_leaders(
                    body["topic_partitions"], unclean=body.get("election_type", 0) == ELECTION_TYPE_UNCLEAN)}

    async def handle_alter_partition_reassignments(self, request: Request, body: dict) -> dict:
        authorize_cluster_operation(self.auth, request, ALTER)
        # v1 (KIP-860) may forbid a change of replication factor; one node never lets a
        # reassignment start at all, so the flag is only answered back.
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None,
                "allow_replication_factor_change": body["allow_replication_factor_change"],
                "responses": self.controller.alter_partition_reassignments(body["topics"])}

    async def handle_list_partition_reassignments(self, request: Request, body: dict) -> dict:
        """No reassignment ever starts on one node (Controller.alter_partition_reassignments),
        so the listing, of every topic or of the ones named, is empty."""
        authorize_cluster_operation(self.auth, request, DESCRIBE)
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None, "topics": []}

    async def handle_list_config_resources(self, request: Request, body: dict) -> dict:
        """KafkaApis.handleListConfigResources (KIP-1142, Admin.listConfigResources): the
        resources of the asked types (all five when none is asked) that have configs: groups
        with overrides, client metrics subscriptions (client_metrics_configs.py), this broker
        and its loggers, every topic. v0 was ListClientMetricsResources:
        client metrics only. A type outside those is UNSUPPORTED_VERSION for the whole request.
        Who may list: DESCRIBE_CONFIGS on the cluster, else the whole request fails
        CLUSTER_AUTHORIZATION_FAILED (handleListClientMetricsResources, KIP-1142's predecessor)."""
        if not self.auth.authorize_cluster(request, DESCRIBE_CONFIGS):
            raise cluster_authorization_failed()
        supported = ((config_helper.CLIENT_METRICS_RESOURCE,) if request.api_version == 0 else (
            config_helper.TOPIC_RESOURCE, config_helper.BROKER_RESOURCE, config_helper.BROKER_LOGGER_RESOURCE,
            config_helper.CLIENT_METRICS_RESOURCE, config_helper.GROUP_RESOURCE))
        asked = body.get("resource_types") or supported
        if any(kind not in supported for kind in asked):
            return {"throttle_time_ms": 0, "error_code": Errors.UNSUPPORTED_VERSION, "config_resources": []}
        listed: list[tuple[str, int]] = []
        for kind in (config_helper.GROUP_RESOURCE, config_helper.CLIENT_METRICS_RESOURCE):
            if kind in asked and kind in self.config_managers:
                listed += [(name, kind) for name in self.config_managers[kind].overrides]
        node = str(self.metadata.node_id)
        for kind in (config_helper.BROKER_LOGGER_RESOURCE, config_helper.BROKER_RESOURCE):
            if kind in asked:
                listed.append((node, kind))
        if config_helper.TOPIC_RESOURCE in asked:
            listed += [(name, config_helper.TOPIC_RESOURCE) for name in self.metadata.topics]
        return {"throttle_time_ms": 0, "error_code": Errors.NONE,
                "config_resources": [{"resource_name": name, "resource_type": kind} for name, kind in listed]}

    async def handle_incremental_alter_configs(self, request: Request, body: dict) -> dict:
        authorized = config_helper.alter_authorization(self.auth, request)
        return await self._alter_configs(body, lambda resource: config_helper.incremental_alter(
            self.controller, self.config, resource, body["validate_only"], self.config_managers, authorized))

    async def handle_alter_configs(self, request: Request, body: dict) -> dict:
        authorized = config_helper.alter_authorization(self.auth, request)
        return await self._alter_configs(body, lambda resource: config_helper.legacy_alter(
            self.controller, resource, body["validate_only"], self.config_managers, authorized))

    async def _alter_configs(self, body: dict, alter) -> dict:
        """Each resource altered in request order; one named twice is refused every time."""
        duplicated = config_helper.duplicated_resources(body["resources"])
        responses = []
        for resource in body["resources"]:
            if (resource["resource_type"], resource["resource_name"]) in duplicated:
                responses.append(config_helper.answer(resource, config_helper.DUPLICATED_RESOURCE))
            else:
                responses.append(await alter(resource))
        return {"throttle_time_ms": 0, "responses": responses}


def _duplicates(names) -> dict:
    """The names given more than once, each mapped to True until its one answer is given."""
    counts = collections.Counter(names)
    return {name: True for name, count in counts.items() if count > 1}
