"""The single-node controller: topic creation, deletion, partitions and topic configs.

In Kafka 4.x these changes go through the KRaft controller
(ReplicationControlManager, ConfigurationControlManager) and land in the
`__cluster_metadata` log. franz runs one node, so the controller acts within the
broker and the log dirs themselves are the record of topics: every partition directory
holds `partition.metadata` (topic id) from its creation on, so a restart finds
every topic and its partition count there. Topic config overrides, which no
partition file holds, live in `topic-configs.json` in the first log dir,
replaced atomically on every change. Since those directories are made and
renamed one partition at a time, `topic-changes.json` (franz.server.topic_journal)
records each creation, growth and deletion under way, and the next start
finishes one a crash cut short: a deletion is completed, a creation or growth
never answered is rolled back, as one commit to Kafka's metadata log would have it.

Nothing here fsyncs on the event loop: a new topic's (or new partitions') logs
are made on a worker thread and published once they all exist, a deleted
topic's logs are closed and renamed on one after it is unpublished, and the
config files are written by one writer thread in the order the changes were
made, each write a snapshot taken on the loop that includes topics still being
created. A topic's growths run one at a time, its deletion waits for them, and
a creation of its name waits for its deletion.

Dynamic broker configs (IncrementalAlterConfigs on a BROKER resource): the
log configs a broker keeps for topics without an override (Kafka's
DynamicLogConfig: every `log.*` synonym of a topic config) and the LogCleaner's
settings (LogCleaner.ReconfigurableConfigs, applied by restarting its threads),
the producer-state keys, the group coordinator's intervals and the connection
limits (SocketServer.ReconfigurableConfigs, through its BrokerReconfigurable)
can be changed at run time, for this broker (resource name = node id) or as the cluster
default (empty name); they live in `broker-configs.json` beside the topic
configs, apply at once to every partition, and rank per-broker, then
cluster default, then the config file, then the built-in default. Any other
broker key is refused, as Kafka refuses keys it cannot reconfigure.

Errors are raised as ApiError(code, message) with Kafka's codes and messages.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from franz.common.config_def import ConfigDef, ConfigError
from franz.protocol.errors import Errors, default_message
from franz.server.kafka_config import (
    CLEANER_RECONFIGURABLE_KEYS,
    GROUP_COORDINATOR_RECONFIGURABLE_KEYS,
    PRODUCER_STATE_RECONFIGURABLE_KEYS,
    SSL_RECONFIGURABLE_KEYS,
    KafkaConfig,
    broker_key_definition,
    cleaner_config,
    cleaner_config_problem,
    is_broker_reconfigurable,
    is_per_broker_key,
    producer_state_config,
    require_group_coordinator_bounds,
)
from franz.server.metadata_cache import (
    LEADER_EPOCH,
    InvalidTopicError,
    MetadataCache,
    TopicMetadata,
    collision_name,
    validate_topic_name,
)
from franz.server.topic_journal import TOPIC_CHANGES_FILE, ChangeStillRecorded, JournalWriteError, TopicJournal
from franz.storage.checkpoint import InconsistentTopicIdError, flush_dir, random_kafka_uuid, uuid_to_kafka_string
from franz.storage.cleaner import CleanerConfig
from franz.storage.local_log import KafkaStorageError
from franz.storage.log_config import BROKER_SYNONYMS, TOPIC_CONFIG_DEF, LogConfig
from franz.storage.log_manager import LogManager
from franz.storage.producer_state import ProducerStateManagerConfig

logger = logging.getLogger(__name__)

TOPIC_CONFIGS_FILE: Final = "topic-configs.json"
BROKER_CONFIGS_FILE: Final = "broker-configs.json"
CLUSTER_DEFAULT: Final = ""  # the resource name of the cluster-wide dynamic broker default
# IncrementalAlterConfigs operations
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
PARTITIONS_MAX: Final = 100_000


class ApiError(Exception):
    def __init__(self, code: Errors, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.error_code = code  # what error_responses reads, when a handler lets one escape
        self.message = message


class DeletionLeftBehind(Exception):
    """A topic's deletion is recorded, but some of its logs, or its configs' entry, could not be
    removed: the next start removes them."""


class BrokerConfigInForce:
    """config[key] as Controller.broker_value answers it: what reads a dynamic key on every use holds."""

    __slots__ = ("_controller",)

    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    def __getitem__(self, key: str) -> Any:
        return self._controller.broker_value(key)


class BrokerReconfigurable(Protocol):
    """What applies some dynamic broker keys itself (Kafka's BrokerReconfigurable). Both methods
    take typed broker values in force before and after the change."""

    reconfigurable_configs: tuple[str, ...]

    def validate_reconfiguration(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Raise ConfigError for values it cannot take."""

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Put validated values in force, on the event loop."""

    # Optional: `files_modified() -> bool`, whether files it read changed since, so that a change
    # of this broker's configs has it reload them even when its values stay the same.


class Controller:
    def __init__(self, config: KafkaConfig, log_manager: LogManager, metadata: MetadataCache) -> None:
        self.config = config
        self.log_manager = log_manager
        self.metadata = metadata
        self._configs_path = Path(config.log_dirs[0]).resolve() / TOPIC_CONFIGS_FILE
        self._broker_configs_path = self._configs_path.with_name(BROKER_CONFIGS_FILE)
        self.static_broker_defaults = config._log_config_props()
        # resource name (node id, or CLUSTER_DEFAULT) -> broker key -> value
        self.dynamic_broker_configs = {name: configs for name, configs in read_json(self._broker_configs_path).items()
                                       if name in (CLUSTER_DEFAULT, str(config.node_id))}
        self._broker_defaults = self._merged_broker_defaults(self.dynamic_broker_configs)
        self._stored_configs = read_json(self._configs_path)
        self._creating: dict[str, asyncio.Future[TopicMetadata]] = {}  # topic name -> its creation under way
        self._pending: dict[str, TopicMetadata] = {}  # the topics of those creations, not yet published
        self._growing: dict[str, asyncio.Future[None]] = {}  # topic name -> its CreatePartitions under way
        self._broker_reconfigurables: list[BrokerReconfigurable] = []
        # Told each deleted topic's name once its logs are gone (Kafka's metadata publishers).
        self.topic_deletion_listeners: list[Callable[[str], Awaitable[None]]] = []
        # Told before its logs are deleted, to stop what writes to them (ReplicaManager.stopPartitions).
        self.topic_deletion_preparers: list[Callable[[str], Awaitable[None]]] = []
        self._deleting: dict[str, asyncio.Future[None]] = {}  # topic name -> its logs' deletion under way
        # One thread writes the config files, in the order the writes were asked for: each write
        # is a snapshot taken on the event loop, so the last one asked for is the last one written.
        self._config_writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="franz-config-writer")
        self._journal = TopicJournal(self._configs_path.with_name(TOPIC_CHANGES_FILE), self.write_file)
        # One change of the topic or broker config files at a time, from reading what is in force
        # to putting the change in force: each store writes the whole file, so two changes built
        # from one state would each store a file without the other (and the second put in force
        # would undo the first).
        self._storing = asyncio.Lock()

    def cleaner_config(self, dynamic: Mapping[str, Mapping[str, str]] | None = None) -> CleanerConfig:
        """The LogCleaner's settings in force."""
        dynamic = self.dynamic_broker_configs if dynamic is None else dynamic
        max_message_bytes = LogConfig.from_props({}, self._merged_broker_defaults(dynamic)).max_message_bytes
        return cleaner_config(self._broker_values(CLEANER_RECONFIGURABLE_KEYS, dynamic), max_message_bytes)

    def producer_state_config(self) -> ProducerStateManagerConfig:
        """Every log's producer-state settings in force."""
        return producer_state_config(self._broker_values(PRODUCER_STATE_RECONFIGURABLE_KEYS,
                                                         self.dynamic_broker_configs))

    def broker_value(self, key: str) -> Any:
        """A broker key's typed value in force now: for a key a running broker can change, this
        broker's dynamic value, else the cluster default's, else the config file's."""
        if is_broker_reconfigurable(key):
            value = self._dynamic_value(key, self.dynamic_broker_configs)
            if value is not None:
                return value
        return self.config[key]

    def broker_values(self, reconfigurable: tuple[str, ...]) -> dict[str, Any]:
        """Typed broker values in force now, for these keys dynamic ones first."""
        return self._broker_values(reconfigurable, self.dynamic_broker_configs)

    @property
    def live_config(self) -> BrokerConfigInForce:
        """The broker config as in force now, read by key as a KafkaConfig is."""
        return BrokerConfigInForce(self)

    def add_broker_reconfigurable(self, reconfigurable: BrokerReconfigurable) -> None:
        """Have it apply its keys' changes from now on, and the stored dynamic values now (built
        from the config file, it starts from the static ones). Stored values it cannot take are
        logged and left out, as Kafka's DynamicBrokerConfig leaves them at startup."""
        self._broker_reconfigurables.append(reconfigurable)
        keys = reconfigurable.reconfigurable_configs
        static, in_force = self._broker_values(keys, {}), self._broker_values(keys, self.dynamic_broker_configs)
        if all(static.get(key) == in_force.get(key) for key in keys):
            return
        try:
            reconfigurable.validate_reconfiguration(static, in_force)
        except ConfigError as exc:
            logger.error("Dynamic broker configs %s could not be applied: %s",
                         sorted(key for key in keys if static.get(key) != in_force.get(key)), exc)
            return
        reconfigurable.reconfigure(static, in_force)

    async def _validated_reconfigurations(self, proposed: Mapping[str, Mapping[str, str]],
                                          reload_files: bool = False) -> list[Callable[[], None]]:
        """The reconfigurables' changes for the proposed dynamic configs, each checked by its
        reconfigurable off the loop, as a check may resolve host names or read files (INVALID_REQUEST,
        as ConfigAdminManager answers for a value that parses but cannot apply); calling one puts
        it in force. `reload_files`: also those whose files changed though their values did not."""
        changes: list[Callable[[], None]] = []
        for reconfigurable in self._broker_reconfigurables:
            keys = reconfigurable.reconfigurable_configs
            old, new = self._broker_values(keys, self.dynamic_broker_configs), self._broker_values(keys, proposed)
            files_modified = getattr(reconfigurable, "files_modified", None)
            reload_only = all(old.get(key) == new.get(key) for key in keys)
            if reload_only and not (reload_files and files_modified is not None and files_modified()):
                continue
            try:
                validate = functools.partial(reconfigurable.validate_reconfiguration, old, new)
                await asyncio.get_running_loop().run_in_executor(None, validate)
            except ConfigError as exc:
                if reload_only:
                    # Kafka validates only changed values; it reloads changed files once the change
                    # is stored (DynamicConfigPublisher), logging a store it cannot take and keeping
                    # the one in force: the request itself succeeds.
                    logger.error("Error updating node with new configuration: %s", ",".join(
                        f"{key}={'[hidden]' if _is_password(key) else value}"
                        for key, value in proposed.get(str(self.config.node_id), {}).items()), exc_info=exc)
                    continue
                raise ApiError(Errors.INVALID_REQUEST, invalid_dynamic_configuration(str(exc))) from None
            changes.append(functools.partial(reconfigurable.reconfigure, old, new))
        return changes

    def _dynamic_value(self, key: str, dynamic: Mapping[str, Mapping[str, str]]) -> Any:
        """The key's typed dynamic value, this broker's before the cluster default's; None if unset."""
        for resource in (str(self.config.node_id), CLUSTER_DEFAULT):
            raw = dynamic.get(resource, {}).get(key)
            if raw is not None:
                return broker_key_definition(key).parse(raw)
        return None

    def _broker_values(self, reconfigurable: tuple[str, ...], dynamic: Mapping[str, Mapping[str, str]]) -> dict:
        """Typed broker values in force: the config file's, then the dynamic cluster default's,
        then this broker's for the `reconfigurable` keys, as for the log configs."""
        values = dict(self.config.values)
        for key in reconfigurable:
            value = self._dynamic_value(key, dynamic)
            if value is not None:
                values[key] = value
        return values

    def _merged_broker_defaults(self, dynamic: Mapping[str, Mapping[str, str]]) -> dict:
        """The broker-level log configs in force: static, then the cluster default, then this broker's."""
        merged = dict(self.static_broker_defaults)
        merged.update(dynamic.get(CLUSTER_DEFAULT, {}))
        merged.update(dynamic.get(str(self.config.node_id), {}))
        return merged

    # -- startup ---------------------------------------------------------------

    def load(self) -> None:
        """Rebuild the topic registry from the loaded logs and the config file; this node
        leads every partition, so each HW moves to its LEO (the ISR is this node)."""
        self._finish_changes_cut_short()
        stored = self._stored_configs
        partitions: dict[str, int] = {}
        topic_ids = {}
        for (topic, partition), partition_log in self.log_manager.logs.items():
            partitions[topic] = max(partitions.get(topic, 0), partition + 1)
            if partition_log.topic_id is not None:
                topic_ids[topic] = partition_log.topic_id
        for topic, count in partitions.items():
            topic_id = topic_ids.get(topic) or random_kafka_uuid()
            self.metadata.put(TopicMetadata(topic, topic_id, count, dict(stored.get(topic, {}))))
        for topic in list(self.metadata.topics.values()):  # a partition dir lost to a crash comes back empty
            self._create_logs(topic, range(topic.num_partitions))
        for partition_log in self.log_manager.all_logs():
            partition_log.maybe_increment_high_watermark(partition_log.log_end_offset)

    def _finish_changes_cut_short(self) -> None:
        """Delete the logs of every creation, growth or deletion the journal says a crash cut short
        (franz.server.topic_journal), and but for a growth their topics' configs, before the topics
        are rebuilt."""
        unfinished = self._journal.unfinished()
        if not unfinished:
            return
        kept = []
        for entry in unfinished:
            name, topic_id, change, first_partition = entry
            partitions = sorted(partition for (topic, partition), partition_log in self.log_manager.logs.items()
                                if topic == name and partition >= first_partition and partition_log.topic_id
                                is not None and uuid_to_kafka_string(partition_log.topic_id) == topic_id)
            logger.warning("The %s of topic %s with topic ID %s was cut short; deleting the %d log(s) it left: %s",
                           change, name, topic_id, len(partitions), partitions)
            failures = self._delete_logs(name, partitions)
            if failures:  # each such log has left LogManager all the same: no topic is rebuilt from it
                # Kafka would take the dir offline and start without it; the entry stays for the next start.
                logger.error("Could not delete %d log(s) of topic %s with topic ID %s; the next start tries "
                             "again: %s", len(failures), name, topic_id, "; ".join(failures))
                kept.append(entry)
            if change != "growth":
                self._stored_configs.pop(name, None)
        _write_json(self._configs_path, self._stored_configs)
        self._journal.forget_all(kept)
        _write_json(self._journal.path, self._journal.content())

    def topic_log_config(self, topic: str) -> LogConfig:
        metadata = self.metadata.get(topic)
        overrides = metadata.configs if metadata is not None else self._stored_configs.get(topic, {})
        return LogConfig.from_props(overrides, self._broker_defaults)

    # -- topics ----------------------------------------------------------------

    def validate_new_topic(self, name: str, num_partitions: int, replication_factor: int,
                           assignments: list[dict], configs: Mapping[str, str | None]) -> tuple[int, dict]:
        """Check a CreateTopics entry; returns (partition count, config overrides)."""
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            raise ApiError(Errors.INVALID_TOPIC_EXCEPTION, str(exc)) from None
        if name in self.metadata.topics or name in self._creating:
            raise ApiError(Errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if "." in name or "_" in name:
            unified = collision_name(name)
            for existing in itertools.chain(self.metadata.topics, self._creating):
                if collision_name(existing) == unified:
                    raise ApiError(Errors.INVALID_TOPIC_EXCEPTION,
                                   f"Topic '{name}' collides with existing topic: {existing}")
        # ReplicationControlManager.createTopics: the configs are checked before the layout.
        overrides = self._validated_configs(configs)
        if assignments:
            if replication_factor != -1:
                raise ApiError(Errors.INVALID_REQUEST, "A manual partition assignment was specified, but replication "
                                                       "factor was not set to -1.")
            if num_partitions != -1:
                raise ApiError(Errors.INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions "
                                                       "was not set to -1.")
            indexes: set[int] = set()
            for assignment in assignments:  # in request order, as ReplicationControlManager.createTopic
                index = assignment["partition_index"]
                if index in indexes:
                    raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                                   f"Found multiple manual partition assignments for partition {index}")
                indexes.add(index)
                self._validate_manual_assignment(assignment["broker_ids"])
            if indexes != set(range(len(indexes))):
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                               "partitions should be a consecutive 0-based integer sequence")
            num_partitions = len(assignments)
        else:
            if replication_factor < -1 or replication_factor == 0:
                raise ApiError(Errors.INVALID_REPLICATION_FACTOR,
                               "Replication factor must be larger than 0, or -1 to use the default value.")
            if num_partitions < -1 or num_partitions == 0:
                raise ApiError(Errors.INVALID_PARTITIONS, "Number of partitions was set to an invalid "
                               "non-positive value.")
            if num_partitions == -1:
                num_partitions = self.config["num.partitions"]
            if replication_factor == -1:
                replication_factor = self.config["default.replication.factor"]
            if num_partitions > PARTITIONS_MAX:
                raise ApiError(Errors.INVALID_PARTITIONS,
                               f"Number of partitions {num_partitions} exceeds franz's limit of {PARTITIONS_MAX}.")
            if replication_factor > 1:
                raise ApiError(Errors.INVALID_REPLICATION_FACTOR,
                               f"Unable to replicate the partition {replication_factor} time(s): The target "
                               f"replication factor of {replication_factor} cannot be reached because only 1 "
                               "broker(s) are registered.")
        return num_partitions, overrides

    def _validated_configs(self, configs: Mapping[str, str | None]) -> dict[str, str]:
        overrides: dict[str, str] = {}
        for key, value in configs.items():
            if key not in TOPIC_CONFIG_DEF:
                raise ApiError(Errors.INVALID_CONFIG, f"Unknown topic config name: {key}")
            if value is None:
                raise ApiError(Errors.INVALID_CONFIG, f"Null value not supported for topic configs: {key}")
            overrides[key] = value
        try:
            LogConfig.from_props(overrides, self._broker_defaults)
        except ConfigError as exc:
            raise ApiError(Errors.INVALID_CONFIG, str(exc)) from None
        if TOPIC_CONFIG_DEF.keys["remote.storage.enable"].parse(overrides.get("remote.storage.enable", False)):
            # LogConfig.validateRemoteStorageOnlyIfSystemEnabled: franz has no remote storage.
            raise ApiError(Errors.INVALID_CONFIG, "Tiered Storage functionality is disabled in the broker. "
                                                  "Topic cannot be configured with remote log storage.")
        return overrides

    async def create_topic(self, name: str, num_partitions: int, overrides: dict[str, str]) -> TopicMetadata:
        """Create the topic's partition logs, then publish the topic.

        The logs are created on a worker thread: each one writes and fsyncs its files and
        its directory, and an fsync on this class of disk can stall for seconds, which on
        the event loop would stall every connection (creating the 50 partitions of
        __consumer_offsets once held a fetch for over 1.5 s). The topic enters the
        metadata cache only once every log exists, so no request sees a partition
        without its log; a creation of the same name meanwhile (two Metadata requests
        auto-creating it) waits for this one instead of starting another."""
        return await asyncio.shield(self._creation_of(name, num_partitions, overrides))

    def _creation_of(self, name: str, num_partitions: int, overrides: dict[str, str]) -> asyncio.Future[TopicMetadata]:
        """The creation of `name` under way, started (and registered) now if there is none."""
        pending = self._creating.get(name)
        if pending is None:
            topic = TopicMetadata(name, random_kafka_uuid(), num_partitions, overrides)
            self._pending[name] = topic
            pending = self._track(self._creating, name, self._create_topic(topic))
            pending.add_done_callback(lambda _done: self._pending.pop(name, None))
        return pending

    def find_coordinator(self, name: str, partition: int, num_partitions: int, overrides: dict[str, str],
                         listener_name: str | None) -> tuple[int, int, str, int]:
        """FindCoordinator's answer for a coordinator living on `partition` of the internal topic
        `name`: (error, node id, host, port). This node once the topic exists; until then its
        creation starts in the background and the answer is COORDINATOR_NOT_AVAILABLE (Kafka's
        KafkaApis.getCoordinator: the client asks again, its connection not held meanwhile).
        The same while that partition has no leader (its log offline after a disk error)."""
        if self.metadata.get(name) is None:
            if name not in self._creating:
                self._creation_of(name, num_partitions, overrides).add_done_callback(_log_failed_creation)
            return Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        if (name, partition) in self.metadata.offline_partitions:
            return Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        endpoint = self.metadata.endpoint_for(listener_name)
        return Errors.NONE, self.metadata.node_id, endpoint.host, endpoint.port

    async def wait_for_creation(self, name: str) -> TopicMetadata | None:
        """The topic once the creation of it under way is done; None when none is."""
        pending = self._creating.get(name)
        return None if pending is None else await asyncio.shield(pending)

    async def shutdown(self) -> None:
        """Let every creation, growth and deletion under way finish: its logs are being made or
        closed on a worker thread, and LogManager must not shut down (and write its clean-shutdown
        marker) beneath it."""
        while self._creating or self._growing or self._deleting:
            await asyncio.gather(*self._creating.values(), *self._growing.values(), *self._deleting.values(),
                                 return_exceptions=True)
        self._config_writer.shutdown(wait=True)

    async def _create_topic(self, topic: TopicMetadata) -> TopicMetadata:
        await self._done(self._deleting, topic.name)  # else the old logs could be found as the new ones
        if topic.name in self._journal.deleting.values():
            # A disk error kept the deletion of a topic of this name from finishing: logs it could
            # not remove, or the journal's entry (ChangeStillRecorded); the next start finishes it.
            # Until then the name is not free: a new topic's partitions would sit beside the old
            # directories, in another log dir, and the next start would find both.
            raise ApiError(Errors.KAFKA_STORAGE_ERROR,
                           f"Could not create topic {topic.name}: a disk error kept the deletion of the topic "
                           f"of this name from finishing, and the next start finishes it")
        partitions = range(topic.num_partitions)
        async with self._recording_logs(self._journal.creating, topic.name, uuid_to_kafka_string(topic.topic_id),
                                        topic, partitions, "creation"):
            if topic.configs:
                async with self._storing:  # before the logs, so a restart finds them with their configs
                    await self._store_configs()
            await self._make_logs(topic, partitions, f"create topic {topic.name}")
        # Committed before it is published: no append to the topic can be answered while a
        # restart would still roll its creation back.
        self.metadata.put(topic)
        logger.info("Created topic %s with topic ID %s and %d partition(s)", topic.name,
                    uuid_to_kafka_string(topic.topic_id), topic.num_partitions)
        return topic

    @contextlib.asynccontextmanager
    async def _recording_logs(self, changes: dict, key: str, value, topic: TopicMetadata, partitions: range,
                              change: str) -> AsyncIterator[None]:
        """The journal's recording (`changes`, `key`, `value`) of a creation or a growth whose body
        makes `partitions`' logs, refused with KAFKA_STORAGE_ERROR when the entry cannot be written
        (nothing was made) or cannot be removed after (ChangeStillRecorded: the next start would roll
        the change back, so a topic published now would lose its records then; the logs go now)."""
        try:
            async with self._journal.recording(changes, key, value):
                yield
        except JournalWriteError as exc:
            raise ApiError(Errors.KAFKA_STORAGE_ERROR,
                           f"Could not record the {change} of topic {topic.name}: {exc}") from exc
        except ChangeStillRecorded as exc:
            await asyncio.to_thread(self._delete_logs_of, topic, partitions)
            raise ApiError(Errors.KAFKA_STORAGE_ERROR,
                           f"Could not record the {change} of topic {topic.name}: {exc}") from exc

    async def _make_logs(self, topic: TopicMetadata, partitions: range, action: str) -> None:
        """_create_logs on a worker thread. A partition holding another topic's ID (a deleted
        topic's directory under the name, left by a disk error) refuses the change whole with
        KAFKA_STORAGE_ERROR, and the logs it made go now (the journal's entry would at a restart);
        Kafka's broker would leave that partition without a leader."""
        try:
            await asyncio.to_thread(self._create_logs, topic, partitions)
        except InconsistentTopicIdError as exc:
            await asyncio.to_thread(self._delete_logs_of, topic, partitions)
            raise ApiError(Errors.KAFKA_STORAGE_ERROR, f"Could not {action}: {exc}") from exc

    def _delete_logs_of(self, topic: TopicMetadata, partitions: Iterable[int]) -> None:
        """Delete the logs of those of `topic`'s partitions that hold its ID (not another topic's)."""
        for partition in partitions:
            partition_log = self.log_manager.logs.get((topic.name, partition))
            if partition_log is not None and partition_log.topic_id == topic.topic_id:
                self.log_manager.delete_log(topic.name, partition)

    def _create_logs(self, topic: TopicMetadata, partitions: Iterable[int]) -> None:
        config = LogConfig.from_props(topic.configs, self._broker_defaults)
        for partition in partitions:
            partition_log = self.log_manager.get_or_create_log(topic.name, partition, topic.topic_id, config)
            # This node now leads the partition at LEADER_EPOCH (Kafka's makeLeader on a metadata
            # change, here on creation and at load): the epoch starts at the log end offset.
            partition_log.maybe_assign_epoch_start_offset(LEADER_EPOCH, partition_log.log_end_offset)

    async def delete_topic(self, name: str) -> None:
        """Unpublish the topic at once, then close, rename and schedule the deletion of its logs
        on a worker thread (each closing snapshots and fsyncs), then drop its configs: a crash
        between leaves a stale config entry, never a topic come back without its configs."""
        await self._done(self._growing, name)  # else partitions being added would outlive their topic
        topic = self.metadata.get(name)
        if topic is None:
            raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, default_message(Errors.UNKNOWN_TOPIC_OR_PARTITION))
        self.metadata.remove(name)
        for prepare in self.topic_deletion_preparers:
            await prepare(name)
        try:
            await asyncio.shield(self._track(self._deleting, name, self._delete_topic(topic)))
        except JournalWriteError as exc:
            # Nothing was deleted: the topic stands, as in Kafka when its controller cannot commit
            # the RemoveTopicRecord. Unpublished, its logs would outlive it, and a topic made
            # again under its name would be given them, records and all.
            self.metadata.put(topic)
            logger.error("Could not delete topic %s: recording the deletion failed: %s", name, exc)
            raise ApiError(Errors.KAFKA_STORAGE_ERROR,
                           f"Could not record the deletion of topic {name}: {exc}") from exc
        except DeletionLeftBehind as exc:
            # The deletion stands, as Kafka's committed RemoveTopicRecord does while a broker
            # fails to remove the logs; the journal keeps the entry, and until a start removes
            # them the name is refused (_create_topic).
            logger.error("Deleted topic %s, but %s", name, exc)
        except ChangeStillRecorded as exc:  # the deletion stands; the next start finishes it again
            logger.error("Deleted topic %s, but could not remove the deletion from the journal: %s", name, exc)
        logger.info("Deleted topic %s with topic ID %s", name, uuid_to_kafka_string(topic.topic_id))
        for listener in self.topic_deletion_listeners:
            try:
                await listener(name)
            except Exception:  # the deletion stands; the listener's own state is its to mend
                logger.exception("A listener failed on the deletion of topic %s", name)

    async def _delete_topic(self, topic: TopicMetadata) -> None:
        # From the first write on, a restart finishes the deletion.
        async with self._journal.recording(self._journal.deleting, uuid_to_kafka_string(topic.topic_id), topic.name):
            failures = await asyncio.to_thread(self._delete_logs, topic.name, range(topic.num_partitions))
            if topic.configs:
                try:
                    async with self._storing:
                        await self._store_configs()
                except ApiError as exc:  # a start before it is stored would give them to a new topic of the name
                    failures.append(f"its configs: {exc.message}")
            if failures:  # raised in the body, so the entry stays and the next start removes what is left
                raise DeletionLeftBehind(f"what of topic {topic.name} could not be removed is removed at the next "
                                         f"start: {'; '.join(failures)}")

    def _delete_logs(self, name: str, partitions: Iterable[int]) -> list[str]:
        """Delete each partition's log, whatever became of the others (a disk error takes only
        that log offline); the errors of those that failed."""
        failures = []
        for partition in partitions:
            try:
                self.log_manager.delete_log(name, partition)
            except (KafkaStorageError, OSError) as exc:
                failures.append(f"{name}-{partition}: {exc}")
        return failures

    @staticmethod
    def _track(under_way: dict[str, asyncio.Future], name: str, work: Awaitable) -> asyncio.Future:
        """Run `work` as `name`'s entry in `under_way` (creations, growths, deletions) until it is done."""
        future = asyncio.ensure_future(work)
        under_way[name] = future
        future.add_done_callback(lambda _done: under_way.pop(name, None))
        return future

    @staticmethod
    async def _done(under_way: dict[str, asyncio.Future], name: str) -> None:
        """Wait until no work of `under_way` (growths, deletions) is running on `name`."""
        while (running := under_way.get(name)) is not None:
            await asyncio.gather(running, return_exceptions=True)

    async def create_partitions(self, name: str, count: int, assignments: list | None, validate_only: bool) -> None:
        """CreatePartitions: the new logs are created on a worker thread (each fsyncs its files,
        see create_topic) and the topic's partition count grows once they all exist. Growths of
        one topic run one after the other, each checked against the count the last one left."""
        await self._done(self._growing, name)
        topic = self.metadata.get(name)
        if topic is None:
            raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, default_message(Errors.UNKNOWN_TOPIC_OR_PARTITION))
        if count < topic.num_partitions:
            raise ApiError(Errors.INVALID_PARTITIONS,
                           f"The topic {name} currently has {topic.num_partitions} partition(s); "
                           f"{count} would not be an increase.")
        if count == topic.num_partitions:
            raise ApiError(Errors.INVALID_PARTITIONS, f"Topic already has {topic.num_partitions} partition(s).")
        if count > PARTITIONS_MAX:
            raise ApiError(Errors.INVALID_PARTITIONS,
                           f"Number of partitions {count} exceeds franz's limit of {PARTITIONS_MAX}.")
        if assignments is not None:
            if len(assignments) != count - topic.num_partitions:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                               f"Attempted to add {count - topic.num_partitions} additional partition(s), "
                               f"but only {len(assignments)} assignment(s) were specified.")
            for assignment in assignments:
                self._validate_manual_assignment(assignment["broker_ids"])
        if validate_only:
            return

        async def grow(old: int = topic.num_partitions) -> None:
            async with self._recording_logs(self._journal.growing, name, (uuid_to_kafka_string(topic.topic_id), old),
                                            topic, range(old, count), "growth"):
                await self._make_logs(topic, range(old, count), f"add partitions to topic {name}")
            topic.num_partitions = count
            logger.info("Increased partition count of %s from %d to %d", name, old, count)

        # shielded: a request given up on still leaves the topic whole
        await asyncio.shield(self._track(self._growing, name, grow()))

    # -- leaders ---------------------------------------------------------------

    def elect_leaders(self, topic_partitions: list[dict] | None, unclean: bool = False) -> list[dict]:
        """ReplicationControlManager.electLeaders on one node: a partition led here already has
        its preferred leader, so a preferred or unclean election is not needed; one whose log is
        offline has no leader and no replica to elect (PREFERRED_LEADER_NOT_AVAILABLE, or for an
        unclean election ELIGIBLE_LEADERS_NOT_AVAILABLE). Asked for every partition (null), the
        answer leaves out those that need no election, as Kafka's does."""
        if topic_partitions is None:
            results = []
            for name in sorted(self.metadata.topics):
                partition_results = [self._election(name, index, unclean)
                                     for index in range(self.metadata.topics[name].num_partitions)]
                results.append({"topic": name, "partition_result": [
                    result for result in partition_results if result["error_code"] != Errors.ELECTION_NOT_NEEDED]})
            return results
        return [{"topic": entry["topic"], "partition_result": [self._election(entry["topic"], partition, unclean)
                                                               for partition in entry["partitions"]]}
                for entry in topic_partitions]

    def _election(self, name: str, partition: int, unclean: bool) -> dict:
        topic = self.metadata.get(name)
        if topic is None:
            error, message = Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}"
        elif not 0 <= partition < topic.num_partitions:
            error, message = Errors.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{partition}"
        elif (name, partition) in self.metadata.offline_partitions:
            error = Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE if unclean else Errors.PREFERRED_LEADER_NOT_AVAILABLE
            message = default_message(error)
        else:
            error, message = Errors.ELECTION_NOT_NEEDED, default_message(Errors.ELECTION_NOT_NEEDED)
        return {"partition_id": partition, "error_code": error, "error_message": message}

    def alter_partition_reassignments(self, topics: list[dict]) -> list[dict]:
        """ReplicationControlManager.alterPartitionReassignments on one node. A target must be a
        valid manual assignment (non-empty, registered brokers, each once); the only valid one
        here is this node alone, which every partition already has, so no reassignment ever
        starts: none is in progress to cancel (null replicas)."""
        responses = []
        for entry in topics:
            name = entry["name"]
            topic = self.metadata.get(name)
            results = []
            for partition in entry["partitions"]:
                index, replicas = partition["partition_index"], partition["replicas"]
                try:
                    if topic is None:
                        raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {name}.")
                    if not 0 <= index < topic.num_partitions:
                        raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {name}:{index}.")
                    if replicas is None:
                        raise ApiError(Errors.NO_REASSIGNMENT_IN_PROGRESS,
                                       default_message(Errors.NO_REASSIGNMENT_IN_PROGRESS))
                    self._validate_manual_assignment(replicas)
                    error = None
                except ApiError as exc:
                    error = exc
                    logger.info("Unable to alter partition reassignment for %s:%d because of an %s error: %s",
                                name, index, exc.code.name, exc.message)
                results.append({"partition_index": index, "error_code": error.code if error else Errors.NONE,
                                "error_message": error.message if error else None})
            responses.append({"name": name, "partitions": results})
        return responses

    def _validate_manual_assignment(self, replicas: list[int]) -> None:
        """ReplicationControlManager.validateManualPartitionAssignment."""
        if not replicas:
            raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT,
                           "The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(replicas):
            if broker_id != self.config.node_id:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker "
                                                                  f"{broker_id}, but no such broker is registered.")
            if broker_id == previous:
                raise ApiError(Errors.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes the "
                                                                  f"broker {broker_id} more than once.")
            previous = broker_id

    # -- configs ---------------------------------------------------------------

    async def alter_topic_configs(self, name: str, operations: list[tuple[str, int, str | None]],
                                  validate_only: bool, replace_all: bool = False) -> None:
        """IncrementalAlterConfigs on a topic: (key, op, value) with op SET 0, DELETE 1,
        APPEND 2, SUBTRACT 3 (list keys only); with replace_all (the legacy AlterConfigs), every
        override the operations leave out is deleted too."""
        async with self._storing:
            if not name:
                raise ApiError(Errors.INVALID_REQUEST, "Default topic resources are not allowed.")
            try:
                validate_topic_name(name)
            except InvalidTopicError as exc:
                raise ApiError(Errors.INVALID_TOPIC_EXCEPTION, str(exc)) from None
            topic = self.metadata.get(name)
            current = topic.configs if topic is not None else {}
            if replace_all:
                operations = replacing(current, operations)
            # ConfigurationControlManager: the operations in order (APPEND/SUBTRACT only on list
            # keys), then only the keys whose value changes are validated, and only then is the
            # topic looked for; so deleting a key that is not set (one Kafka 4.0 removed, say) is
            # a success that changes nothing.
            for key, op, _value in operations:
                if op in (APPEND, SUBTRACT) and (key not in TOPIC_CONFIG_DEF
                                                 or TOPIC_CONFIG_DEF.keys[key].type != "list"):
                    raise ApiError(Errors.INVALID_CONFIG,
                                   f"Can't {OP_NAMES[op]} to key {key} because its type is not LIST.")
            configs = apply_operations(current, operations, lambda key: key, _static_default_text)
            for key in sorted(set(configs) | set(current)):
                if configs.get(key) != current.get(key) and key not in TOPIC_CONFIG_DEF:
                    raise ApiError(Errors.INVALID_CONFIG, f"Unknown topic config name: {key}")
            self._validated_configs(configs)
            if topic is None:
                raise ApiError(Errors.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
            if validate_only:
                return
            await self._store_configs({name: configs})
            topic.configs = configs
            self._reconfigure_logs([name])
            logger.info("Updated configs of topic %s: %s", name, configs)

    async def alter_broker_configs(self, resource_name: str, operations: list[tuple[str, int, str | None]],
                                   validate_only: bool, replace_all: bool = False) -> None:
        """IncrementalAlterConfigs on a broker (resource name = node id) or on the cluster
        default (empty name), of the keys a running broker can change (is_broker_reconfigurable,
        and the log configs' synonyms). replace_all as for topics."""
        async with self._storing:
            if resource_name not in (CLUSTER_DEFAULT, str(self.config.node_id)):
                raise ApiError(Errors.INVALID_REQUEST, f"Unexpected broker id, expected {self.config.node_id} or empty "
                               f"string, but received {resource_name}")
            current = self.dynamic_broker_configs.get(resource_name, {})
            if replace_all:
                operations = replacing(current, operations)
            static = sorted({key for key, _op, _value in operations if key not in BROKER_SYNONYMS
                             and not is_broker_reconfigurable(key) and key not in SSL_RECONFIGURABLE_KEYS})
            if static:
                raise ApiError(Errors.INVALID_REQUEST,
                               f"Cannot update these configs dynamically: Set({', '.join(static)})")
            # checked, as Kafka checks them, on the configs the request leaves: deleting one is no change
            bare = sorted({key for key, op, _value in operations if op != DELETE and key in SSL_RECONFIGURABLE_KEYS})
            if bare:
                raise ApiError(Errors.INVALID_REQUEST, "These security configs can be dynamically updated only per-"
                                                       f"listener using the listener prefix: Set({', '.join(bare)})")
            per_broker = sorted({key for key, op, _value in operations if op != DELETE and is_per_broker_key(key)})
            if resource_name == CLUSTER_DEFAULT and per_broker:
                raise ApiError(Errors.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker "
                                                       f"id must be specified: Set({', '.join(per_broker)})")
            for key, op, _value in operations:
                if is_broker_reconfigurable(key) and op in (APPEND, SUBTRACT):
                    raise ApiError(Errors.INVALID_CONFIG,
                                   f"Can't {OP_NAMES[op]} to key {key} because its type is not LIST.")
            configs = apply_operations(current, operations, BROKER_SYNONYMS.__getitem__,
                                       lambda key: _static_default_text(BROKER_SYNONYMS[key]))
            # A value that does not parse, or that the broker would refuse at startup, is
            # INVALID_REQUEST: ConfigAdminManager.validateBrokerConfigChange turns every failure of
            # DynamicBrokerConfig.validate into an InvalidRequestException (KAFKA-13609).
            for key, value in configs.items():  # named by the broker key the operator used
                definition = (TOPIC_CONFIG_DEF.keys[BROKER_SYNONYMS[key]] if key in BROKER_SYNONYMS
                              else broker_key_definition(key))
                try:
                    definition.parse(value)
                except ConfigError as exc:
                    raise ApiError(Errors.INVALID_REQUEST, str(ConfigError(key, value, exc.reason))) from None
            proposed = {**self.dynamic_broker_configs, resource_name: configs}
            try:
                require_group_coordinator_bounds(self._broker_values(GROUP_COORDINATOR_RECONFIGURABLE_KEYS, proposed))
            except ConfigError as exc:
                raise ApiError(Errors.INVALID_REQUEST, str(exc)) from None
            merged = self._merged_broker_defaults(proposed)
            try:
                LogConfig.from_props({}, merged)
            except ConfigError as exc:
                raise ApiError(Errors.INVALID_REQUEST, str(exc)) from None
            cleaner = self.log_manager.cleaner
            old_cleaner_config, new_cleaner_config = self.cleaner_config(), self.cleaner_config(proposed)
            if new_cleaner_config != old_cleaner_config:
                # ConfigAdminManager answers INVALID_REQUEST for a config that parses but cannot apply.
                problem = cleaner_config_problem(new_cleaner_config)
                if problem is not None:
                    raise ApiError(Errors.INVALID_REQUEST, f"requirement failed: {problem}")
                if cleaner is not None and new_cleaner_config.num_threads != old_cleaner_config.num_threads:
                    try:
                        cleaner.validate_reconfiguration(new_cleaner_config)
                    except ValueError as exc:
                        raise ApiError(Errors.INVALID_REQUEST, invalid_dynamic_configuration(str(exc))) from None
            # A change of this broker's configs also reloads the store files changed in place, even
            # with every value as it was (KAFKA-7429; KRaft records such a change, KAFKA-14136);
            # a validate-only one does not (ConfigAdminManager validates changed values only).
            reconfigurations = await self._validated_reconfigurations(
                proposed, reload_files=resource_name == str(self.config.node_id) and not validate_only)
            if validate_only:
                return
            dynamic = {name: values for name, values in proposed.items() if values}
            await self.store_file(self._broker_configs_path, {name: dict(values) for name, values in dynamic.items()})
            self.dynamic_broker_configs = dynamic
            self._broker_defaults = merged
            self._reconfigure_logs(list(self.metadata.topics))
            # Every log shares this object: the change reaches them all at once (volatile in Kafka).
            shared, changed = self.log_manager.producer_state_config, self.producer_state_config()
            shared.producer_id_expiration_ms = changed.producer_id_expiration_ms
            shared.transaction_verification_enabled = changed.transaction_verification_enabled
            if cleaner is not None and new_cleaner_config != old_cleaner_config:
                # Joins the cleaner threads, which finish their current read first: off the loop.
                await asyncio.get_running_loop().run_in_executor(None, cleaner.reconfigure, new_cleaner_config)
            for reconfigure in reconfigurations:
                reconfigure()
            logger.info("Updated dynamic broker configs of %s: %s",
                        f"broker {resource_name}" if resource_name else "the cluster default", configs)

    def _reconfigure_logs(self, topics: list[str]) -> None:
        """Give the partitions of the topics the log config now in force."""
        for name in topics:
            topic = self.metadata.get(name)
            if topic is None:
                continue
            new_config = self.topic_log_config(name)
            for partition in range(topic.num_partitions):
                # a replica moving between log dirs has two logs (LogManager.updateTopicConfig)
                for partition_log in (self.log_manager.get_log(name, partition),
                                      self.log_manager.get_future_log(name, partition)):
                    if partition_log is not None:
                        partition_log.local_log.update_config(new_config)

    async def _store_configs(self, changed: Mapping[str, dict[str, str]] | None = None) -> None:
        """Store every topic's overrides, those of topics still being created too, with `changed`
        (a topic's overrides not yet in force) in place of its own (store_file)."""
        topics = {**self.metadata.topics, **self._pending}
        overrides = {name: dict(topic.configs) for name, topic in topics.items()}
        overrides.update(changed or {})
        await self.store_file(self._configs_path, {name: configs for name, configs in overrides.items() if configs})

    async def store_file(self, path: Path, snapshot: object) -> None:
        """write_file for a change its caller puts in force only once this returns. A failed write
        is judged by the file it left, as a start would read it (the topic journal does the same):
        holding `snapshot` (the rename landed, the fsync of the dir failed), the change stands,
        logged; otherwise KAFKA_STORAGE_ERROR, and nothing changed. Applying a change before
        storing it answered the client an error for a change in force until the next start."""
        try:
            await self.write_file(path, snapshot)
        except OSError as exc:
            if await asyncio.to_thread(_holds, path, snapshot):
                logger.error("%s holds the change, though writing it failed: %s", path, exc)
                return
            logger.error("Could not store %s: %s", path, exc)
            raise ApiError(Errors.KAFKA_STORAGE_ERROR, f"Could not store {path.name}: {exc}") from exc

    async def write_file(self, path: Path, snapshot: object) -> None:
        """Replace a JSON file of the first log dir (write, fsync, rename, fsync the dir) on the
        config writer thread, after every write asked for before; `snapshot` must not change
        meanwhile. The files of configs, of topic changes and of client quotas all go this way."""
        await asyncio.get_running_loop().run_in_executor(self._config_writer, _write_json, path, snapshot)


def _log_failed_creation(creation: asyncio.Future) -> None:
    if not creation.cancelled() and creation.exception() is not None:
        logger.error("Could not create an internal topic", exc_info=creation.exception())


# IncrementalAlterConfigs' operations by code, as AlterConfigOp.OpType names them.
OP_NAMES: Final = {0: "SET", 1: "DELETE", 2: "APPEND", 3: "SUBTRACT"}


def _static_default_text(key: str) -> str:
    """A topic config's built-in default as text: what APPEND and SUBTRACT start from when the
    key is not set (KafkaConfigSchema.getDefault; not the broker's value in force)."""
    value = TOPIC_CONFIG_DEF.keys[key].default
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def replacing(current: Mapping[str, str], operations: list[tuple[str, int, str | None]]
              ) -> list[tuple[str, int, str | None]]:
    """The legacy AlterConfigs' operations, which set the resource's whole set of overrides: the
    given ones, then a DELETE of each override in `current` they leave out. Built from what is in
    force under the store's lock, so that a change stored meanwhile is replaced too."""
    named = {key for key, _op, _value in operations}
    return operations + [(key, DELETE, None) for key in current if key not in named]


def apply_operations(configs: Mapping[str, str], operations: list[tuple[str, int, str | None]],
                     topic_key: Callable[[str], str], default_text: Callable[[str], str],
                     definition: ConfigDef = TOPIC_CONFIG_DEF) -> dict[str, str]:
    """The configs after IncrementalAlterConfigs' operations; APPEND and SUBTRACT only on list
    keys (their type in `definition`, of the key topic_key names), starting from the value in force."""
    result = dict(configs)
    for key, op, value in operations:
        if op == SET:
            if value is None:
                raise ApiError(Errors.INVALID_REQUEST, f"Null value not supported for : {key}")
            result[key] = value
        elif op == DELETE:
            result.pop(key, None)
        elif op in (APPEND, SUBTRACT):
            if definition.keys[topic_key(key)].type != "list":
                raise ApiError(Errors.INVALID_CONFIG, f"Can't {OP_NAMES[op]} to key {key} because its type is not LIST.")
            current = [item for item in result.get(key, default_text(key)).split(",") if item]
            items = [item for item in (value or "").split(",") if item]
            if op == APPEND:
                current += [item for item in items if item not in current]
            else:
                current = [item for item in current if item not in items]
            result[key] = ",".join(current)
        else:
            raise ApiError(Errors.INVALID_REQUEST, f"Unknown alter config operation {op}")
    return result


async def store_overrides(overrides: dict[str, dict[str, str]], name: str, configs: dict[str, str], path: Path,
                          write: Callable[[Path, object], Awaitable[None]]) -> None:
    """A resource's overrides become `configs` (none left: the resource goes) once the whole
    {name: {key: value}} file holding them is stored (`write`: Controller.store_file)."""
    proposed = {resource: dict(values) for resource, values in overrides.items() if resource != name}
    if configs:
        proposed[name] = dict(configs)
    await write(path, proposed)
    if configs:
        overrides[name] = configs
    else:
        overrides.pop(name, None)


def read_json(path: Path) -> dict[str, dict[str, str]]:
    """A {name: {key: value}} file; empty when absent, and (with a warning) when unreadable."""
    if not path.exists():
        return {}
    try:
        stored = json.loads(path.read_text("utf-8"))
        if not isinstance(stored, dict):
            raise ValueError("not a JSON object")
        return {str(name): {str(k): str(v) for k, v in configs.items()} for name, configs in stored.items()}
    except (OSError, ValueError, AttributeError) as exc:
        logger.warning("Ignoring unreadable %s: %s", path, exc)
        return {}


def _holds(path: Path, snapshot: object) -> bool:
    """Whether the JSON file at `path` reads as `snapshot` would be written."""
    try:
        return json.loads(path.read_text(encoding="utf-8")) == json.loads(json.dumps(snapshot))
    except (OSError, ValueError):
        return False


def _write_json(path: Path, content: dict) -> None:
    """Replace the file atomically (write, fsync, rename, fsync the directory)."""
    temporary = path.with_suffix(".json.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(content, handle, indent=1, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    flush_dir(path.parent)


def invalid_dynamic_configuration(message: str) -> str:
    """What a client is told of a reconfigurable that refused new values: DynamicBrokerConfig wraps
    the ConfigException in ConfigException("Invalid dynamic configuration", e), whose value is the
    exception, and ConfigAdminManager passes its message on."""
    return (f"Invalid value org.apache.kafka.common.config.ConfigException: {message} for configuration "
            f"Invalid dynamic configuration")


def _is_password(key: str) -> bool:
    """Whether a broker key's value is a password, logged as Kafka logs one ([hidden])."""
    definition = broker_key_definition(key)
    return definition is not None and definition.type == "password"
