"""KafkaServer: one franz node, started and stopped as a whole (kafka.server.KafkaRaftServer).

Startup order, as Kafka's: config -> log manager (loads and, after an unclean
stop, recovers every log) -> metadata and controller (topics from the log
dirs) -> replica manager and purgatories -> request handlers -> socket server.
The node serves requests only once every log is loaded.

Shutdown (SIGTERM or SIGINT, the contract in DESIGN.md) is the controlled one:
stop accepting and let in-flight requests finish, stop the purgatories and the
append thread, then LogManager.shutdown() flushes, trims indexes, snapshots
producer state, writes the checkpoints and the clean-shutdown marker. Exit 0.

Log lines keep Kafka's wording where operators grep for them
("Kafka Server started", "shut down completed").
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import signal
import sys
import time
from pathlib import Path

from franz.common.config_def import ConfigError
from franz.coordinator.group.group_config import GROUP_CONFIGS_FILE, GroupConfigManager
from franz.coordinator.group.group_coordinator_service import KEY_TYPE_SHARE, GroupCoordinatorService
from franz.coordinator.share.share_coordinator import ShareCoordinator
from franz.coordinator.transaction.transaction_coordinator import TransactionCoordinator
from franz.protocol import api_keys
from franz.server.acl_apis import AclApis
from franz.server.auth_helper import AuthHelper
from franz.server.acl_control_manager import ACLS_FILE, AclControlManager
from franz.server.allocator import keep_request_buffers_in_heap, reserve_request_heap
from franz.server import config_helper
from franz.server.broker_features import SHARE_VERSION
from franz.server.broker_metrics import BrokerMetrics
from franz.server.client_metrics_configs import CLIENT_METRICS_FILE, ClientMetricsConfigManager
from franz.server.client_quota_control_manager import CLIENT_QUOTAS_FILE, ClientQuotaControlManager
from franz.server.controller import Controller
from franz.server.controller_apis import ControllerApis
from franz.server.controller_mutation_quota import ControllerMutationQuotaManager
from franz.server.delegation_token_apis import DelegationTokenApis
from franz.server.delegation_token_control_manager import DELEGATION_TOKENS_FILE, DelegationTokenControlManager
from franz.server.delegation_token_manager import DelegationTokenManager
from franz.server.describe_topic_partitions import DescribeTopicPartitionsApi
from franz.server.feature_control_manager import FEATURES_FILE, FeatureControlManager
from franz.server.garbage_collector import configure_collector, freeze_startup_objects
from franz.server.kafka_apis import KafkaApis
from franz.server.kafka_config import (SSL_RECONFIGURABLE_KEYS, STANDARD_AUTHORIZER, Endpoint, KafkaConfig,
                                       listener_key)
from franz.server.metadata_cache import MetadataCache
from franz.server.producer_id_manager import ProducerIdManager
from franz.server.replica_manager import ReplicaManager
from franz.server.sasl_apis import SaslApis
from franz.server.scram_control_manager import SCRAM_CREDENTIALS_FILE, ScramControlManager
from franz.server.share.share_apis import ShareApis
from franz.server.share.share_state_apis import ShareStateApis
from franz.server.share.share_partition_manager import SharePartitionManager
from franz.server.oauth_bearer_validator import OAuthBearerValidator
from franz.server.socket_server import SocketServer, new_event_loop
from franz.server.ssl_channel_builder import SslListenerReconfigurable
from franz.server.standard_authorizer import StandardAuthorizer
from franz.storage import local_log, unified_log, validator
from franz.server.txn_marker_apis import TxnMarkerApis
from franz.storage.log_manager import LogManager

logger = logging.getLogger("franz.server.KafkaRaftServer")
broker_logger = logging.getLogger("franz.server.BrokerServer")

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"
HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = 5000  # replica.high.watermark.checkpoint.interval.ms


class KafkaServer:
    def __init__(self, config: KafkaConfig, authorizer: StandardAuthorizer | None = None) -> None:
        """`authorizer`: the StandardAuthorizer that decides every request and holds the ACLs (kept in
        the first log dir); by default the one authorizer.class.name names, configured from the
        broker's keys (super.users, allow.everyone.if.no.acl.found), or none."""
        self.config = config
        if authorizer is None and config.values["authorizer.class.name"] == STANDARD_AUTHORIZER:
            authorizer = StandardAuthorizer()
            authorizer.configure(config.originals)  # super.users, allow.everyone.if.no.acl.found, node.id
        self.authorizer = authorizer
        self.log_manager: LogManager | None = None
        self.socket_server: SocketServer | None = None
        self.oauth_bearer_validators: list[OAuthBearerValidator] = []  # started: to close at shutdown
        self.replica_manager: ReplicaManager | None = None
        self.apis: KafkaApis | None = None
        self.metadata: MetadataCache | None = None
        self.controller: Controller | None = None
        self.metrics: BrokerMetrics | None = None
        self.group_coordinator: GroupCoordinatorService | None = None
        self.share_coordinator: ShareCoordinator | None = None
        self.share_partitions: SharePartitionManager | None = None
        self.transaction_coordinator: TransactionCoordinator | None = None
        self.delegation_tokens: DelegationTokenControlManager | None = None
        self._prefix = f"[KafkaRaftServer nodeId={config.node_id}]"
        self._broker_prefix = f"[BrokerServer id={config.node_id}]"  # BrokerServer's LogContext
        self._status = "SHUTDOWN"  # BrokerServer's ProcessStatus

    def _change_status(self, expected: str, to: str) -> bool:
        """BrokerServer.maybeChangeStatus: move on only from `expected`, and log the move."""
        if self._status != expected:
            return False
        broker_logger.info("%s Transition from %s to %s", self._broker_prefix, self._status, to)
        self._status = to
        return True

    async def startup(self) -> None:
        if not self._change_status("SHUTDOWN", "STARTING"):
            return
        broker_logger.info("%s Starting broker", self._broker_prefix)
        config = self.config
        for key in config.unknown_keys:
            logger.warning("The configuration '%s' was supplied but isn't a known config.", key)
        loop = asyncio.get_running_loop()
        log_manager = LogManager(
            config.log_dirs, config.log_config, node_id=config.node_id, cluster_id=config["cluster.id"],
            num_recovery_threads_per_data_dir=config["num.recovery.threads.per.data.dir"],
            flush_check_ms=config["log.flush.scheduler.interval.ms"],
            flush_recovery_offset_checkpoint_ms=config["log.flush.offset.checkpoint.interval.ms"],
            flush_start_offset_checkpoint_ms=config["log.flush.start.offset.checkpoint.interval.ms"],
            retention_check_ms=config["log.retention.check.interval.ms"],
            initial_task_delay_ms=config["log.initial.task.delay.ms"], cleaner_config=config.cleaner_config,
            producer_id_expiration_check_ms=config["producer.id.expiration.check.interval.ms"],
            max_transaction_timeout_ms=config["transaction.max.timeout.ms"],
            background_threads=config["background.threads"])
        self.log_manager = log_manager
        controller_holder: list[Controller] = []
        log_manager.topic_config = lambda topic: controller_holder[0].topic_log_config(topic)
        metadata = MetadataCache(config.node_id, "", [])
        metadata.offline_partitions = log_manager.offline_logs
        controller = Controller(config, log_manager, metadata)
        controller_holder.append(controller)
        log_manager.cleaner_config = controller.cleaner_config()  # with the dynamic log.cleaner.* values
        log_manager.producer_state_config = controller.producer_state_config()  # and the producer-state ones
        # Loading may recover logs for a long time: off the loop.
        await loop.run_in_executor(None, log_manager.startup)
        metadata.cluster_id = log_manager.cluster_id or ""
        controller.load()
        self.metadata, self.controller = metadata, controller
        log_manager.scheduler.schedule("highwatermark-checkpoint", log_manager.checkpoint_high_watermarks,
                                       HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS)
        self.metrics = BrokerMetrics()
        self.replica_manager = ReplicaManager(
            config.node_id, log_manager, metadata, self.metrics.topic_stats,
            fetch_purge_interval=config["fetch.purgatory.purge.interval.requests"],
            produce_purge_interval=config["producer.purgatory.purge.interval.requests"])
        self.replica_manager.startup()
        self.apis = KafkaApis(config, metadata, controller, self.replica_manager,
                              ProducerIdManager(log_manager.log_dirs[0]), self.metrics, AuthHelper(self.authorizer))
        first_dir = Path(config.log_dirs[0]).resolve()
        # The finalized feature levels, before any coordinator starts: they follow them.
        feature_control = FeatureControlManager(first_dir / FEATURES_FILE, controller.store_file, metadata.features,
                                                config.node_id)
        feature_control.register(self.apis)
        # read on every use: group.consumer.assignment.interval.ms may change at run time
        group_configs = GroupConfigManager(first_dir / GROUP_CONFIGS_FILE, controller.store_file, controller.live_config)
        self.apis.group_configs = group_configs
        self.apis.config_managers = {
            config_helper.GROUP_RESOURCE: group_configs,
            config_helper.CLIENT_METRICS_RESOURCE: ClientMetricsConfigManager(first_dir / CLIENT_METRICS_FILE,
                                                                              controller.store_file)}
        mutation_quota = ControllerMutationQuotaManager(config["quota.window.num"], config["quota.window.size.seconds"],
                                                        lambda: time.monotonic_ns() // 1_000_000)
        ControllerApis(config, controller, metadata, self.replica_manager, mutation_quota, self.apis.metrics,
                       self.apis.config_managers).register(self.apis)
        if self.authorizer is not None:  # loads the stored ACLs into it, and changes them from now on
            AclControlManager(first_dir / ACLS_FILE, controller.store_file, self.authorizer)
        AclApis(self.authorizer).register(self.apis)
        DescribeTopicPartitionsApi(metadata, config["max.request.partition.size.limit"]).register(self.apis)
        client_quotas = ClientQuotaControlManager(
            first_dir / CLIENT_QUOTAS_FILE, controller.store_file,
            [self.apis.produce_quota, self.apis.fetch_quota, self.apis.request_quota, mutation_quota])
        client_quotas.register(self.apis)
        scram = ScramControlManager(first_dir / SCRAM_CREDENTIALS_FILE, controller.store_file)
        scram.register(self.apis)
        SaslApis().register(self.apis)
        # with delegation.token.secret.key: the stored tokens, checked for expiry periodically
        tokens = DelegationTokenControlManager(
            first_dir / DELEGATION_TOKENS_FILE, controller.store_file,
            DelegationTokenManager(config["delegation.token.secret.key"]), config["delegation.token.max.lifetime.ms"],
            config["delegation.token.expiry.time.ms"])
        self.delegation_tokens = tokens
        tokens.schedule_sweeps(log_manager.scheduler, loop, config["delegation.token.expiry.check.interval.ms"])
        DelegationTokenApis(tokens).register(self.apis)
        self.share_coordinator = ShareCoordinator(config, controller, self.replica_manager, metadata)
        await self.share_coordinator.startup()  # loads share-partition state from __share_group_state
        self.share_coordinator.start_maintenance()
        self.group_coordinator = GroupCoordinatorService(config, controller, self.replica_manager, metadata,
                                                         group_configs=group_configs,
                                                         share_coordinator=self.share_coordinator)
        self.metrics.registry.register(self.group_coordinator.metrics)
        await self.group_coordinator.startup()  # loads groups and offsets from __consumer_offsets
        self.group_coordinator.register(self.apis)
        self.group_coordinator.resolvers[KEY_TYPE_SHARE] = self.share_coordinator.resolve
        ShareStateApis(self.share_coordinator).register(self.apis)
        controller.topic_deletion_listeners.append(self.group_coordinator.on_topic_deleted)
        self.share_partitions = SharePartitionManager(config, self.replica_manager, metadata,
                                                      self.share_coordinator, group_configs)
        ShareApis(self.share_partitions, metadata).register(self.apis)
        feature_control.level_listeners[SHARE_VERSION] = [self.share_partitions.on_share_version_toggle]
        self.replica_manager.append_listeners.append(self.share_partitions.on_appended)
        controller.topic_deletion_listeners.append(self.share_partitions.on_topic_deleted)
        TxnMarkerApis(self.replica_manager, self.group_coordinator).register(self.apis)
        self.transaction_coordinator = TransactionCoordinator(config, controller, self.replica_manager, metadata,
                                                              self.apis.producer_ids, self.group_coordinator)
        await self.transaction_coordinator.startup()  # completes transactions left half-ended
        self.transaction_coordinator.register(self.apis, self.group_coordinator)
        self.apis.alter_log_dirs.startup()  # resumes the moves between log dirs a stop cut short
        controller.topic_deletion_preparers.append(self.apis.alter_log_dirs.before_topic_deletion)
        controller.topic_deletion_preparers.append(self.replica_manager.stop_partitions)
        for sasl in config.sasl_listeners.values():  # KIP-768's handlers fetch their keys now, off the loop
            if isinstance(sasl.oauth_bearer_validator, OAuthBearerValidator):
                await loop.run_in_executor(None, sasl.oauth_bearer_validator.init)  # failing, startup fails
                self.oauth_bearer_validators.append(sasl.oauth_bearer_validator)
            if sasl.kerberos is not None and sasl.kerberos.login_to_kdc:  # KerberosLogin; failing, startup fails
                await loop.run_in_executor(None, sasl.kerberos.login)
        self.socket_server = SocketServer(config, self.apis.handle,
                                          header_version_of=api_keys.request_header_version,
                                          scram_credential_of=scram.credential,
                                          token_credential_of=tokens.token_manager.token_credential)
        for connection_quotas in self.socket_server.all_connection_quotas:  # IP connection rates
            client_quotas.add_manager(connection_quotas)
        controller.add_broker_reconfigurable(self.socket_server)  # with the stored connection limits
        for listener in config.ssl_listeners:  # with the stored key and trust stores
            reconfigurable = self._ssl_listener_reconfigurable(config, listener)
            reconfigurable.load(controller.broker_values(reconfigurable.reconfigurable_configs))
            controller.add_broker_reconfigurable(reconfigurable)
        self.socket_server.close_listeners.append(self.share_partitions.on_connection_closed)
        self.socket_server.request_completed = self.metrics.request_metrics.update
        await self.socket_server.start()
        socket_server = self.socket_server
        self.metrics.watch(log_manager, lambda: socket_server.queued_requests,
                           {"Produce": self.apis.produce_quota, "Fetch": self.apis.fetch_quota,
                            "Request": self.apis.request_quota}, metadata, lambda: self._status)
        self.metrics.watch_network(socket_server, self.replica_manager.append_thread)
        if config["metrics.port"] > 0:
            self.metrics.serve(config.listeners[0].host or "127.0.0.1", config["metrics.port"])
        metadata.advertised = self._advertised_endpoints()
        self._change_status("STARTING", "STARTED")
        logger.info("%s Kafka Server started", self._prefix)

    def _ssl_listener_reconfigurable(self, config: KafkaConfig, listener: str) -> SslListenerReconfigurable:
        assert self.socket_server is not None
        return SslListenerReconfigurable(
            listener, tuple(listener_key(listener, key) for key in SSL_RECONFIGURABLE_KEYS),
            self.socket_server.ssl_listeners, functools.partial(config.ssl_listener_config, listener),
            config.listener_value(listener, "ssl.allow.dn.changes"),
            config.listener_value(listener, "ssl.allow.san.changes"))

    def _advertised_endpoints(self) -> list[Endpoint]:
        assert self.socket_server is not None
        if self.config.values["advertised.listeners"]:
            return self.config.advertised_listeners
        # Port 0 binds a free port: advertise the bound one; an empty host, this host's loopback name.
        return [Endpoint(e.listener_name, e.host or "localhost", e.port) for e in self.socket_server.bound_endpoints]

    async def shutdown(self) -> None:
        """Stop what startup started; a server that never began starting has nothing to stop."""
        if not (self._change_status("STARTED", "SHUTTING_DOWN") or self._change_status("STARTING", "SHUTTING_DOWN")):
            return
        broker_logger.info("%s shutting down", self._broker_prefix)
        if self.metrics is not None:
            self.metrics.shutdown()
        if self.socket_server is not None:
            await self.socket_server.shutdown()
        for oauth_validator in self.oauth_bearer_validators:  # joins its JWKS refresh thread
            await asyncio.get_running_loop().run_in_executor(None, oauth_validator.close)
        if self.apis is not None:
            await self.apis.alter_log_dirs.shutdown()
        if self.transaction_coordinator is not None:
            await self.transaction_coordinator.shutdown()
        if self.share_partitions is not None:
            await self.share_partitions.shutdown()
        if self.share_coordinator is not None:
            await self.share_coordinator.shutdown()
        if self.group_coordinator is not None:
            await self.group_coordinator.shutdown()
        if self.delegation_tokens is not None:
            await self.delegation_tokens.shutdown()
        if self.controller is not None:
            await self.controller.shutdown()
        if self.replica_manager is not None:
            await self.replica_manager.shutdown()
        if self.log_manager is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.log_manager.shutdown)
        broker_logger.info("%s shut down completed", self._broker_prefix)
        self._change_status("SHUTTING_DOWN", "SHUTDOWN")


async def _serve(config: KafkaConfig) -> int:
    server = KafkaServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        await server.startup()
    except BaseException:
        broker_logger.critical("%s Fatal error during broker startup. Prepare to shutdown", server._broker_prefix,
                               exc_info=True)
        await server.shutdown()
        return 1
    frozen = freeze_startup_objects()  # what startup loaded lives until shutdown (see garbage_collector)
    logger.info("%s Exempted %d objects loaded at startup from garbage collection", server._prefix, frozen)
    await stop.wait()
    await server.shutdown()
    return 0


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stdout)
    # log4j's level names, so that a line reads "WARN" and "FATAL" as Kafka's do
    logging.addLevelName(logging.WARNING, "WARN")
    logging.addLevelName(logging.CRITICAL, "FATAL")
    logging.Formatter.default_msec_format = "%s,%03d"


# The broker runs Python on three threads: the event loop, the append thread and the log cleaner's.
# A thread that released the GIL for a syscall waits up to the switch interval to get it back from
# one that computes, and the loop does that on every send and receive: with CPython's 5 ms, a
# cleaning pass took a paced producer's p99 from 4 ms to 262-463 ms; with 0.5 ms, to 27-34 ms
# (bench/cleaner_bench.py), and the franz-only broker_bench rows did not get slower.
GIL_SWITCH_INTERVAL_S = 0.0005


def warn_if_native_modules_not_built() -> None:
    """One WARN line when `pip install` did not build franz's C modules (a source tree run
    as is): every produce is then validated record by record, and appended, in Python."""
    missing = [name for name, built in (("franz.storage._validator_fast",
                                         validator.assign_offsets_non_compressed is not None),
                                        ("franz.storage._segment_fast", local_log.NATIVE_APPEND),
                                        ("franz.storage._unified_log_fast",
                                         unified_log.append_as_leader_common_case is not None))
               if not built]
    if missing:
        logger.warning("%s not built (`pip install -e .` builds %s): produce requests are validated and appended "
                       "in Python, several times slower", " and ".join(missing),
                       "it" if len(missing) == 1 else "them")


def run_from_cli(args: argparse.Namespace) -> int:
    configure_logging()
    warn_if_native_modules_not_built()
    try:
        config = KafkaConfig.from_sources(args.config, args.override)
    except ConfigError as exc:
        # Kafka's own words for some checks do not name the key (a listener's protocol): add it.
        where = "" if exc.key in str(exc) else f" ({exc.key})"
        print(f"franz: invalid configuration{where}: {exc}", file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"franz: cannot read configuration: {exc}", file=sys.stderr)
        return 2
    if keep_request_buffers_in_heap():
        reserve_request_heap()
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    configure_collector()
    loop = new_event_loop()
    try:
        return loop.run_until_complete(_serve(config))
    finally:
        loop.close()
