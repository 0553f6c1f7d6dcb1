"""TransactionCoordinator: transactional producers' InitProducerId, AddPartitionsToTxn and EndTxn
(kafka.coordinator.transaction.TransactionCoordinator, TransactionStateManager, TransactionMarkerChannelManager).

Every state change of a transactional id is appended to its partition of
`__transaction_state` (created compacted on first use) before it is adopted
or answered, so the log is the truth: a restart replays it, and a transaction
found in PrepareCommit/PrepareAbort is completed then (its markers written
again: markers are idempotent for a producer with no open transaction).

EndTxn runs the whole two-phase end before answering: PrepareCommit (or
PrepareAbort) persisted, a COMMIT (ABORT) control batch appended to every
partition of the transaction with the producer's id and epoch, then
CompleteCommit (CompleteAbort) persisted. Kafka answers after the prepare and
writes markers asynchronously, answering CONCURRENT_TRANSACTIONS meanwhile;
answering after the markers gives clients the same guarantees with fewer retries.

Two transaction versions are served, chosen per request as Kafka chooses them
(TransactionVersion.transactionVersionFor*): v1 clients (EndTxn v0-4,
AddPartitionsToTxn v0-3) keep their epoch across transactions; v2 clients
(KIP-890 part 2: EndTxn v5, and the partitions a broker adds for Produce v12+
and TxnOffsetCommit v5+ through AddPartitionsToTxn v4+) get the epoch bumped at
every end, the markers written with the bumped epoch so a zombie of the old one
cannot write after them, and a new producer id when the epoch runs out. Which
version a transaction last spoke is persisted with it.

InitProducerId on an id with an open transaction fences it (epoch bump, abort
markers) and answers CONCURRENT_TRANSACTIONS so the producer retries, as Kafka
does. Open transactions older than their timeout are aborted the same way
every `transaction.abort.timed.out.transaction.cleanup.interval.ms`. Those
aborts follow the finalized transaction.version (2), as Kafka's do. Every
`transaction.remove.expired.transaction.cleanup.interval.ms`, ids with no
transaction open and unchanged for `transactional.id.expiration.ms` are written
off with a tombstone and forgotten.

Offsets in transactions: AddOffsetsToTxn (v1 clients) or TxnOffsetCommit v5
itself (v2 clients) adds the group's partition of `__consumer_offsets` to the
transaction; the group coordinator writes the TxnOffsetCommit records there
(after `verify_offsets_partition`), and every marker written into that topic is
told to it (`on_transaction_marker`) so those offsets become committed or are dropped.

Operations on one transactional id are serialized by a per-id asyncio lock, kept while in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Final

from franz.common.java_regex import java_pattern
from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC, load_partition
from franz.coordinator.keyed_locks import KeyedLocks
from franz.coordinator.transaction import transaction_log
from franz.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC
from franz.coordinator.transaction.transaction_metadata import (
    EPOCH_MAX,
    STATE_NAMES,
    STATES_BY_NAME,
    TransactionMetadata,
    TransactionState,
)
from franz.protocol.errors import Errors
from franz.records import ControlRecordType, MemoryRecords
from franz.records.builder import MemoryRecordsBuilder, SimpleRecord, build_batch, build_control_batch, now_ms
from franz.records.record import record_size_in_bytes
from franz.protocol.errors import default_message
from franz.server.auth_helper import CLUSTER_ACTION, DESCRIBE, READ, WRITE, AuthHelper
from franz.server.broker_features import TRANSACTION_VERSION
from franz.server.controller import ApiError
from franz.server.metadata_cache import INTERNAL_TOPICS
from franz.server.standard_authorizer import ResourceType
from franz.storage.producer_append_info import INT16_MAX, AppendOrigin

logger = logging.getLogger(__name__)

KEY_TYPE_TRANSACTION: Final = 1
COMPLETION_RETRY_BACKOFF_MS: Final = 100
COMPLETION_RETRY_BACKOFF_MAX_MS: Final = 1_000
# TransactionState.isExpirationAllowed: no transaction open and no markers to write.
_EXPIRATION_ALLOWED: Final = frozenset({TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                                        TransactionState.COMPLETE_ABORT})
# TransactionStateManager.appendTransactionToLog: what a failed write of the state is told as.
_APPEND_ERRORS: Final = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
}
TV_0: Final = 0
TV_2: Final = 2


def add_partitions_version(api_version: int) -> int:
    """TransactionVersion.transactionVersionForAddPartitionsToTxn: v4+ comes from a broker
    adding a v2 producer's partitions (v1 clients send v3 or below)."""
    return TV_2 if api_version > 3 else TV_0


def end_txn_version(api_version: int) -> int:
    """TransactionVersion.transactionVersionForEndTxn."""
    return TV_2 if api_version > 4 else TV_0


def as_add_partitions_manager_answers(error: Errors, abortable_known: bool) -> Errors:
    """The coordinator's verify or add answer as AddPartitionsToTxnManager hands it to Produce
    and TxnOffsetCommit: PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE as
    INVALID_TXN_STATE to a request version that predates it."""
    if error == Errors.PRODUCER_FENCED:
        return Errors.INVALID_PRODUCER_EPOCH
    if error == Errors.TRANSACTION_ABORTABLE and not abortable_known:
        return Errors.INVALID_TXN_STATE
    return error


def _as_version_knows_it(error: Errors, api_version: int) -> Errors:
    """PRODUCER_FENCED came with v2 of EndTxn, AddPartitionsToTxn and AddOffsetsToTxn: older
    clients are told INVALID_PRODUCER_EPOCH, which they handle the same way (KafkaApis)."""
    return Errors.INVALID_PRODUCER_EPOCH if error == Errors.PRODUCER_FENCED and api_version < 2 else error


class TxnError(Exception):
    def __init__(self, code: Errors, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code


def _is_valid_producer_id(metadata: TransactionMetadata, producer_id: int, producer_epoch: int) -> bool:
    """Whether an InitProducerId naming (producer_id, producer_epoch) is this transactional id's
    producer (TransactionCoordinator's isValidProducerId): the metadata was just made, the id
    is the current one (the epoch is checked by the bump), or it is the previous id with an
    exhausted epoch (a retry of a bump that moved to a new producer id)."""
    return (metadata.producer_epoch == -1 or producer_id == metadata.producer_id
            or (producer_id == metadata.prev_producer_id and producer_epoch >= EPOCH_MAX))


class TransactionCoordinator:
    def __init__(self, config, controller, replica_manager, metadata, producer_ids, group_coordinator=None) -> None:
        self.config = config
        self.group_coordinator = group_coordinator  # told of markers in __consumer_offsets; AddOffsetsToTxn
        self.auth = AuthHelper()  # KafkaApis' checks once registered; every action allowed until then
        self.controller = controller
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.producer_ids = producer_ids
        self.partition_count = config["transaction.state.log.num.partitions"]
        self.max_timeout_ms = config["transaction.max.timeout.ms"]
        self.abort_check_ms = config["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
        self.expiration_ms = config["transactional.id.expiration.ms"]
        self.expiration_check_ms = config["transaction.remove.expired.transaction.cleanup.interval.ms"]
        self.transactions: dict[str, TransactionMetadata] = {}
        self._lock = KeyedLocks()  # per transactional id
        self._reapers: list[asyncio.Task] = []
        self._completions: set[asyncio.Task] = set()  # completions being retried

    # -- lifecycle -------------------------------------------------------------

    async def startup(self) -> None:
        loaded = 0
        if self.metadata.get(TRANSACTION_STATE_TOPIC) is not None:
            for partition in range(self.metadata.get(TRANSACTION_STATE_TOPIC).num_partitions):
                log = self.replica_manager.log_of((TRANSACTION_STATE_TOPIC, partition))
                if log is not None:
                    loaded += load_partition(log, self._replay)
        for transactional_id, metadata in list(self.transactions.items()):
            if metadata.pending_markers:
                async with self._lock(transactional_id):
                    await self._complete_or_retry(metadata, metadata.state == TransactionState.PREPARE_COMMIT)
        if loaded:
            logger.info("Loaded %d transactional ids from %d records of %s", len(self.transactions), loaded,
                        TRANSACTION_STATE_TOPIC)
        loop = asyncio.get_running_loop()
        self._reapers = [  # TransactionCoordinator.startup's two scheduled tasks
            loop.create_task(self._every(self.abort_check_ms, self.abort_timed_out_transactions,
                                         "Aborting timed-out transactions")),
            loop.create_task(self._every(self.expiration_check_ms, self.remove_expired_transactional_ids,
                                         "Removing expired transactional ids"))]

    async def shutdown(self) -> None:
        for task in list(self._completions):  # a restart completes them from the log
            task.cancel()
        reapers, self._reapers = self._reapers, []
        for reaper in reapers:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper

    def register(self, apis, group_coordinator=None) -> None:
        self.auth = apis.auth
        apis.register("AddPartitionsToTxn", self.handle_add_partitions_to_txn)
        apis.register("EndTxn", self.handle_end_txn)
        apis.register("DescribeTransactions", self.handle_describe_transactions)
        apis.register("ListTransactions", self.handle_list_transactions)
        apis.transaction_coordinator = self
        apis.internal_topic_creators[TRANSACTION_STATE_TOPIC] = self._ensure_topic
        if group_coordinator is not None:
            self.group_coordinator = group_coordinator
            group_coordinator.resolvers[KEY_TYPE_TRANSACTION] = self.resolve
            group_coordinator.transaction_verifier = self.verify_offsets_partition
            apis.register("AddOffsetsToTxn", self.handle_add_offsets_to_txn)

    def resolve(self, key: str, request) -> tuple:
        """FindCoordinator for a transactional id: this node, once the state topic exists."""
        return self.controller.find_coordinator(TRANSACTION_STATE_TOPIC, self._partition_of(key), self.partition_count,
                                                self._topic_configs(), request.listener_name)

    def _resigned(self, transactional_id: str) -> bool:
        """Whether the id's __transaction_state partition is offline (a disk error took its log
        offline): Kafka's coordinator resigns a partition it no longer leads, and its ids are
        then answered NOT_COORDINATOR (TransactionStateManager.getTransactionState), left out
        of ListTransactions and never timed out here."""
        offline = self.metadata.offline_partitions
        return bool(offline) and (TRANSACTION_STATE_TOPIC, self._partition_of(transactional_id)) in offline

    def _partition_of(self, transactional_id: str) -> int:
        """The id's __transaction_state partition, over the topic's own partition count once it
        exists (metadataCache.numPartitions, else transaction.state.log.num.partitions)."""
        return transaction_log.partition_for(transactional_id, self.metadata.partition_count(
            TRANSACTION_STATE_TOPIC, self.partition_count))

    def _topic_configs(self) -> dict[str, str]:
        return {"cleanup.policy": "compact", "min.insync.replicas": "1",
                "segment.bytes": str(self.config["transaction.state.log.segment.bytes"])}

    async def _ensure_topic(self) -> None:
        if self.metadata.get(TRANSACTION_STATE_TOPIC) is None:
            await self.controller.create_topic(TRANSACTION_STATE_TOPIC, self.partition_count, self._topic_configs())

    def _replay(self, key: bytes, value: bytes | None, offset: int) -> None:
        transactional_id = transaction_log.read_key(key)
        if value is None:
            self.transactions.pop(transactional_id, None)
        else:
            self.transactions[transactional_id] = transaction_log.read_value(transactional_id, value)

    # -- persistence -------------------------------------------------------------

    async def _persist(self, metadata: TransactionMetadata) -> None:
        """Append the new state; adopt it only once it is in the log."""
        # The value's version follows the finalized transaction.version (TransactionStateManager).
        value_version = transaction_log.log_value_version(self.server_transaction_version())
        await self._append_state(metadata.transactional_id, transaction_log.value_bytes(metadata, value_version))
        self.transactions[metadata.transactional_id] = metadata

    async def _append_state(self, transactional_id: str, value: bytes | None) -> None:
        """Append the id's record (None: its tombstone) to its __transaction_state partition;
        TxnError as appendTransactionToLog tells clients when the append fails."""
        await self._ensure_topic()
        payload = build_batch([SimpleRecord(value, transaction_log.key_bytes(transactional_id))])
        await self._append_to_log(self._partition_of(transactional_id), payload)

    async def _append_to_log(self, partition: int, payload: bytes) -> None:
        """Append a batch to a __transaction_state partition (acks -1); TxnError as above."""
        key = (TRANSACTION_STATE_TOPIC, partition)
        rm = self.replica_manager
        results = await rm.run_on_append_thread(rm.append_records, -1, {key: payload})
        code = results[key]["error_code"]
        if code != Errors.NONE:  # as TransactionStateManager.appendTransactionToLog tells clients
            raise TxnError(_APPEND_ERRORS.get(code, Errors(code)), results[key].get("error_message"))
        rm.on_appended([key])

    def _write_markers(self, producer_id: int, producer_epoch: int, partitions: set[tuple[str, int]],
                       commit: bool, transaction_version: int) -> list[tuple[str, int]]:
        """Append a COMMIT/ABORT marker to each partition (on the append thread)."""
        control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
        written = []
        for topic, index in sorted(partitions):
            partition = self.replica_manager.get_partition(topic, index)
            if partition is None:
                logger.warning("Skipping the %s marker for %s-%d: the partition is gone", control.name, topic, index)
                continue
            marker = MemoryRecords(bytearray(build_control_batch(control, producer_id=producer_id,
                                                                 producer_epoch=producer_epoch)))
            partition.append_records_to_leader(marker, 1, AppendOrigin.COORDINATOR,
                                               transaction_version=transaction_version)
            written.append((topic, index))
        return written

    @staticmethod
    def _completed(metadata: TransactionMetadata, commit: bool) -> TransactionMetadata:
        """TransactionMetadata.prepareComplete: CompleteCommit/CompleteAbort; a transactions-v2
        end that exhausted the epoch hands over its next producer id."""
        done = metadata.transition_to(TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT,
                                      now_ms())
        if metadata.client_transaction_version >= TV_2 and metadata.next_producer_id != -1:
            done.producer_id, done.producer_epoch = metadata.next_producer_id, 0
        done.next_producer_id = -1
        return done

    async def _complete(self, metadata: TransactionMetadata, commit: bool) -> TransactionMetadata:
        """From PrepareCommit/PrepareAbort: markers (with the prepared, possibly bumped, epoch),
        then the completed state."""
        rm = self.replica_manager
        written = await rm.run_on_append_thread(self._write_markers, metadata.producer_id, metadata.producer_epoch,
                                                set(metadata.partitions), commit,
                                                metadata.client_transaction_version)
        rm.on_appended(written)
        if self.group_coordinator is not None:  # on the loop, where the group coordinator's state lives
            for topic, index in written:
                if topic == OFFSETS_TOPIC:
                    self.group_coordinator.on_transaction_marker(index, metadata.producer_id, commit)
        done = self._completed(metadata, commit)
        await self._persist(done)
        return done

    async def _complete_or_retry(self, prepared: TransactionMetadata, commit: bool) -> TransactionMetadata:
        """Complete a transaction whose prepare is written. If a marker or the completion cannot
        be written, the transaction stays prepared (its producer hears CONCURRENT_TRANSACTIONS)
        and the completion is retried in the background until it is written, as Kafka's marker
        channel retries; the end was decided, so its answer is the completed identity."""
        try:
            return await self._complete(prepared, commit)
        except Exception as exc:  # a storage error of a partition, or of __transaction_state
            logger.warning("Completing the transaction of %s (producer id %d) failed, retrying: %s",
                           prepared.transactional_id, prepared.producer_id, exc)
            task = asyncio.get_running_loop().create_task(self._retry_completion(prepared, commit))
            self._completions.add(task)
            task.add_done_callback(self._completions.discard)
            return self._completed(prepared, commit)

    async def _retry_completion(self, prepared: TransactionMetadata, commit: bool) -> None:
        backoff_s = COMPLETION_RETRY_BACKOFF_MS / 1000
        while True:
            await asyncio.sleep(backoff_s)
            async with self._lock(prepared.transactional_id):
                if self.transactions.get(prepared.transactional_id) is not prepared:
                    return  # replaced meanwhile (the id expired, or a restart loaded it again)
                try:
                    await self._complete(prepared, commit)
                    logger.info("Completed the transaction of %s (producer id %d) on a retry",
                                prepared.transactional_id, prepared.producer_id)
                    return
                except Exception as exc:
                    logger.warning("Completing the transaction of %s failed again: %s", prepared.transactional_id,
                                   exc)
            backoff_s = min(backoff_s * 2, COMPLETION_RETRY_BACKOFF_MAX_MS / 1000)

    def _prepare_end(self, metadata: TransactionMetadata, commit: bool, transaction_version: int,
                     no_partition_added: bool = False, fence: bool = False) -> TransactionMetadata:
        """TransactionMetadata.prepareAbortOrCommit. Transactions v2 bump the epoch at every end
        (the markers carry the new one, so a zombie of the old epoch cannot write after them);
        at the last epoch the next end also takes a new producer id. An abort with nothing
        added (v2 only) starts its transaction now. Below v2 only a `fence` (the coordinator's
        own abort) bumps the epoch, and the end is recorded as a v0 client's
        (endTransactionWithTV1)."""
        now = now_ms()
        prepared = metadata.transition_to(
            TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT, now)
        if transaction_version >= TV_2:
            if metadata.epoch_exhausted:
                prepared.next_producer_id = self.producer_ids.generate_producer_id()
            if not (metadata.producer_epoch == INT16_MAX and not commit):  # a broken state aborts without overflow
                prepared.producer_epoch = metadata.producer_epoch + 1
            prepared.last_producer_epoch = metadata.producer_epoch
        elif fence:  # prepareFenceProducerEpoch's bump, never past the last epoch
            prepared.producer_epoch = min(metadata.producer_epoch + 1, INT16_MAX)
            prepared.last_producer_epoch = -1
        if no_partition_added:
            prepared.txn_start_timestamp_ms = now
        prepared.client_transaction_version = transaction_version if transaction_version >= TV_2 else TV_0
        return prepared

    async def _end(self, metadata: TransactionMetadata, commit: bool, transaction_version: int,
                   no_partition_added: bool = False, fence: bool = False) -> TransactionMetadata:
        prepared = self._prepare_end(metadata, commit, transaction_version, no_partition_added, fence)
        await self._persist(prepared)
        return await self._complete_or_retry(prepared, commit)

    async def _fence_and_abort(self, metadata: TransactionMetadata) -> None:
        """Abort an open transaction for the coordinator's own reasons (a new producer's
        InitProducerId, a timeout): prepareFenceProducerEpoch, then an abort at the server's
        transaction version. Either way the epoch moves up once, so its old producer is fenced:
        at v2 by the abort's own bump, below by the fence's."""
        await self._end(metadata, commit=False, transaction_version=self.server_transaction_version(), fence=True)

    def server_transaction_version(self) -> int:
        """The finalized transaction.version (TransactionStateManager.transactionVersionLevel):
        what the coordinator's own aborts and its log values follow."""
        return self.metadata.features.level(TRANSACTION_VERSION)

    # -- handlers ----------------------------------------------------------------

    async def init_producer_id(self, transactional_id: str, timeout_ms: int, producer_id: int,
                               producer_epoch: int) -> tuple[int, int, Errors]:
        if transactional_id == "":
            return -1, -1, Errors.INVALID_REQUEST
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            return -1, -1, Errors.INVALID_TRANSACTION_TIMEOUT
        if self._resigned(transactional_id):
            return -1, -1, Errors.NOT_COORDINATOR
        async with self._lock(transactional_id):
            metadata = self.transactions.get(transactional_id)
            try:
                # TransactionCoordinator.prepareInitProducerIdTransit, in its order.
                expected = producer_id >= 0
                if metadata is None:
                    metadata = TransactionMetadata(transactional_id, self.producer_ids.generate_producer_id(), -1,
                                                   timeout_ms)
                elif metadata.pending_markers:
                    return -1, -1, Errors.CONCURRENT_TRANSACTIONS
                elif expected and not _is_valid_producer_id(metadata, producer_id, producer_epoch):
                    return -1, -1, Errors.PRODUCER_FENCED
                elif metadata.state == TransactionState.ONGOING:
                    await self._fence_and_abort(metadata)
                    return -1, -1, Errors.CONCURRENT_TRANSACTIONS
                if metadata.epoch_exhausted and (not expected or producer_epoch == metadata.producer_epoch):
                    # prepareProducerIdRotation: the last epoch is kept only for a producer that named it.
                    new_id, new_epoch = self.producer_ids.generate_producer_id(), 0
                    last_epoch = metadata.producer_epoch if expected else -1
                elif not expected:
                    new_id, new_epoch, last_epoch = metadata.producer_id, metadata.producer_epoch + 1, -1
                elif metadata.producer_epoch == -1 or producer_epoch == metadata.producer_epoch:
                    new_id, new_epoch = metadata.producer_id, metadata.producer_epoch + 1
                    last_epoch = metadata.producer_epoch
                elif producer_epoch == metadata.last_producer_epoch:
                    # A retry of the bump it did not hear back from: the current identity, no new
                    # bump, but Empty again with the timeout it asks for (prepareIncrementProducerEpoch).
                    new_id, new_epoch = metadata.producer_id, metadata.producer_epoch
                    last_epoch = metadata.last_producer_epoch
                else:
                    return -1, -1, Errors.PRODUCER_FENCED
                ready = dataclasses.replace(metadata.transition_to(TransactionState.EMPTY, now_ms()),
                                            producer_id=new_id, producer_epoch=new_epoch, txn_timeout_ms=timeout_ms,
                                            txn_start_timestamp_ms=-1, last_producer_epoch=last_epoch)
                await self._persist(ready)
            except TxnError as exc:
                return -1, -1, exc.code
            return new_id, new_epoch, Errors.NONE

    def _check_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> TransactionMetadata:
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            raise TxnError(Errors.INVALID_PRODUCER_ID_MAPPING)
        if producer_epoch != metadata.producer_epoch:
            raise TxnError(Errors.PRODUCER_FENCED)
        if metadata.pending_markers:
            raise TxnError(Errors.CONCURRENT_TRANSACTIONS)
        return metadata

    async def add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             partitions: set[tuple[str, int]], transaction_version: int) -> Errors:
        """TransactionCoordinator.handleAddPartitionsToTransaction: the partitions join the
        producer's transaction (Ongoing from now if it was not), written before answered;
        nothing is written when an ongoing transaction holds them all already."""
        if not transactional_id:
            return Errors.INVALID_REQUEST
        if self._resigned(transactional_id):
            return Errors.NOT_COORDINATOR
        async with self._lock(transactional_id):
            try:
                metadata = self._check_producer(transactional_id, producer_id, producer_epoch)
                if metadata.state == TransactionState.ONGOING and partitions <= metadata.partitions:
                    return Errors.NONE
                ongoing = metadata.transition_to(TransactionState.ONGOING, now_ms())
                if metadata.state != TransactionState.ONGOING:
                    ongoing.txn_start_timestamp_ms = ongoing.txn_last_update_timestamp_ms
                ongoing.partitions |= partitions
                ongoing.client_transaction_version = transaction_version
                await self._persist(ongoing)
            except TxnError as exc:
                return exc.code
            except ValueError:
                return Errors.INVALID_TXN_STATE
        return Errors.NONE

    async def _add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              topics: list[dict], transaction_version: int, api_version: int,
                              refused: frozenset[str] = frozenset()) -> list[dict]:
        """Partitions of `refused` topics (the principal may not WRITE them) fail the
        transaction's request as unknown partitions do: the others are OPERATION_NOT_ATTEMPTED."""
        requested = [(t["name"], p) for t in topics for p in t["partitions"]]
        unknown = {tp for tp in requested if tp[0] not in refused and not self.metadata.has_partition(*tp)}
        failed = unknown or any(topic in refused for topic, _ in requested)
        error = Errors.OPERATION_NOT_ATTEMPTED if failed else _as_version_knows_it(await self.add_partitions(
            transactional_id, producer_id, producer_epoch, set(requested), transaction_version), api_version)
        by_topic: dict[str, list] = {}
        for topic, index in requested:
            code = (Errors.TOPIC_AUTHORIZATION_FAILED if topic in refused else
                    Errors.UNKNOWN_TOPIC_OR_PARTITION if (topic, index) in unknown else error)
            by_topic.setdefault(topic, []).append({"partition_index": index, "partition_error_code": code})
        return [{"name": name, "results_by_partition": results} for name, results in by_topic.items()]

    def verify_partitions(self, transactional_id: str | None, producer_id: int, producer_epoch: int,
                          partitions: list[tuple[str, int]]) -> dict[tuple[str, int], Errors]:
        """TransactionCoordinator.handleVerifyPartitionsInTransaction (KIP-890): whether the
        producer's transaction holds each partition, read from the adopted (written) state;
        a transaction being ended is CONCURRENT_TRANSACTIONS, a partition it does not hold
        TRANSACTION_ABORTABLE."""
        if not transactional_id:
            return dict.fromkeys(partitions, Errors.INVALID_REQUEST)
        if self._resigned(transactional_id):
            return dict.fromkeys(partitions, Errors.NOT_COORDINATOR)
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            return dict.fromkeys(partitions, Errors.INVALID_PRODUCER_ID_MAPPING)
        if metadata.producer_epoch != producer_epoch:
            return dict.fromkeys(partitions, Errors.PRODUCER_FENCED)
        if metadata.pending_markers:
            return dict.fromkeys(partitions, Errors.CONCURRENT_TRANSACTIONS)
        return {tp: Errors.NONE if tp in metadata.partitions else Errors.TRANSACTION_ABORTABLE for tp in partitions}

    async def handle_add_partitions_to_txn(self, request, body: dict) -> dict:
        """KafkaApis.handleAddPartitionsToTxnRequest. Up to v3 a client's: WRITE on the
        transactional id, then WRITE on each topic (an internal topic is never authorized).
        From v4 only brokers send it: CLUSTER_ACTION, else the whole request fails."""
        version = request.api_version
        if version <= 3:
            transactional_id, topics = body["v3_and_below_transactional_id"], body["v3_and_below_topics"]
            if not self.auth.authorize(request, WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
                return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": [
                    {"name": t["name"], "results_by_partition": [
                        {"partition_index": p, "partition_error_code": Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
                        for p in t["partitions"]]} for t in topics]}
            refused: frozenset[str] = frozenset()
            if self.auth.enabled:  # Kafka's filter leaves internal topics out of the authorized ones
                names = [t["name"] for t in topics]
                allowed = self.auth.filter_by_authorized(request, WRITE, ResourceType.TOPIC,
                                                         [n for n in names if n not in INTERNAL_TOPICS])
                refused = frozenset(names).difference(allowed)
            results = await self._add_partitions(transactional_id, body["v3_and_below_producer_id"],
                                                 body["v3_and_below_producer_epoch"], topics,
                                                 add_partitions_version(version), version, refused)
            return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
        if not self.auth.authorize_cluster(request, CLUSTER_ACTION):
            raise ApiError(Errors.CLUSTER_AUTHORIZATION_FAILED, default_message(Errors.CLUSTER_AUTHORIZATION_FAILED))
        answers = []
        for transaction in body["transactions"]:
            if transaction["verify_only"]:  # a broker asking whether a produce may open the partition
                results = self._verified(transaction)
            else:  # a broker adding a transactions-v2 producer's partitions
                results = await self._add_partitions(transaction["transactional_id"], transaction["producer_id"],
                                                     transaction["producer_epoch"], transaction["topics"],
                                                     add_partitions_version(version), version)
            answers.append({"transactional_id": transaction["transactional_id"], "topic_results": results})
        return {"throttle_time_ms": 0, "error_code": 0, "results_by_transaction": answers}

    def _verified(self, transaction: dict) -> list[dict]:
        verified = self.verify_partitions(transaction["transactional_id"], transaction["producer_id"],
                                          transaction["producer_epoch"],
                                          [(t["name"], p) for t in transaction["topics"] for p in t["partitions"]])
        by_topic: dict[str, list] = {}
        for (topic, index), code in verified.items():
            by_topic.setdefault(topic, []).append({"partition_index": index, "partition_error_code": code})
        return [{"name": name, "results_by_partition": results} for name, results in by_topic.items()]

    async def handle_add_offsets_to_txn(self, request, body: dict) -> dict:
        """KafkaApis.handleAddOffsetsToTxn: the group's offsets partition joins the transaction
        (only transactions-v1 clients send it: v2 ones commit their offsets straight away)."""
        assert self.group_coordinator is not None
        if not self.auth.authorize(request, WRITE, ResourceType.TRANSACTIONAL_ID, body["transactional_id"]):
            return {"throttle_time_ms": 0, "error_code": Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
        if not self.auth.authorize(request, READ, ResourceType.GROUP, body["group_id"]):
            return {"throttle_time_ms": 0, "error_code": Errors.GROUP_AUTHORIZATION_FAILED}
        await self.group_coordinator.ensure_offsets_topic()
        partition = self.group_coordinator.partition_for(body["group_id"])
        results = await self._add_partitions(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                                             [{"name": OFFSETS_TOPIC, "partitions": [partition]}], TV_0,
                                             request.api_version)
        return {"throttle_time_ms": 0, "error_code": results[0]["results_by_partition"][0]["partition_error_code"]}

    async def verify_offsets_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                       partition: int, api_version: int) -> Errors:
        """For TxnOffsetCommit: before v5, the producer's transaction must hold that partition
        (added by AddOffsetsToTxn); from v5 (transactions v2) the commit adds it itself, as
        ReplicaManager's ADD_PARTITION operation does. Answers as AddPartitionsToTxnManager
        gives them: PRODUCER_FENCED as INVALID_PRODUCER_EPOCH, and a partition not held as
        TRANSACTION_ABORTABLE from v4, INVALID_TXN_STATE before."""
        if api_version > 4:
            error = await self.add_partitions(transactional_id, producer_id, producer_epoch,
                                              {(OFFSETS_TOPIC, partition)}, TV_2)
        else:
            error = self.verify_partitions(transactional_id, producer_id, producer_epoch,
                                           [(OFFSETS_TOPIC, partition)])[(OFFSETS_TOPIC, partition)]
        return as_add_partitions_manager_answers(error, abortable_known=api_version > 3)

    async def handle_end_txn(self, request, body: dict) -> dict:
        if not self.auth.authorize(request, WRITE, ResourceType.TRANSACTIONAL_ID, body["transactional_id"]):
            return {"throttle_time_ms": 0, "error_code": Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                    "producer_id": -1, "producer_epoch": -1}
        transaction_version = end_txn_version(request.api_version)
        if body["transactional_id"] and self._resigned(body["transactional_id"]):
            return {"throttle_time_ms": 0, "error_code": Errors.NOT_COORDINATOR, "producer_id": -1,
                    "producer_epoch": -1}
        async with self._lock(body["transactional_id"]):
            if transaction_version >= TV_2:
                error, producer_id, producer_epoch = await self._end_transaction_v2(
                    body["transactional_id"], body["producer_id"], body["producer_epoch"], body["committed"])
            else:
                error, producer_id, producer_epoch = await self._end_transaction_v1(
                    body["transactional_id"], body["producer_id"], body["producer_epoch"], body["committed"])
        # v5 hands the producer its next identity (-1 and -1 with an error).
        return {"throttle_time_ms": 0, "error_code": _as_version_knows_it(error, request.api_version),
                "producer_id": producer_id, "producer_epoch": producer_epoch}

    async def _end_transaction_v1(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                  commit: bool) -> tuple[Errors, int, int]:
        """TransactionCoordinator.endTransactionWithTV1: the epoch stays; a retry of an end
        that happened is answered NONE; an end already being written is CONCURRENT_TRANSACTIONS."""
        if not transactional_id:
            return Errors.INVALID_REQUEST, -1, -1
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            return Errors.INVALID_PRODUCER_ID_MAPPING, -1, -1
        if producer_epoch != metadata.producer_epoch:
            return Errors.PRODUCER_FENCED, -1, -1
        state = metadata.state
        if state == TransactionState.ONGOING:
            try:
                await self._end(metadata, commit, TV_0)
            except TxnError as exc:
                return exc.code, -1, -1
            return Errors.NONE, -1, -1
        if (state, commit) in ((TransactionState.COMPLETE_COMMIT, True), (TransactionState.COMPLETE_ABORT, False)):
            return Errors.NONE, -1, -1  # a retry of an end that already happened
        if (state, commit) in ((TransactionState.PREPARE_COMMIT, True), (TransactionState.PREPARE_ABORT, False)):
            return Errors.CONCURRENT_TRANSACTIONS, -1, -1
        return Errors.INVALID_TXN_STATE, -1, -1

    async def _end_transaction_v2(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                  commit: bool) -> tuple[Errors, int, int]:
        """TransactionCoordinator.endTransaction with transactions v2 (EndTxn v5): every end
        bumps the epoch, so the same epoch means the next end and only the epoch below the
        current one (or the last epoch of the producer id the end replaced) is a retry,
        answered with the identity the end handed out. An abort needs no open transaction."""
        if not transactional_id:
            return Errors.INVALID_REQUEST, -1, -1
        metadata = self.transactions.get(transactional_id)
        if metadata is None:
            return Errors.INVALID_PRODUCER_ID_MAPPING, -1, -1
        state = metadata.state
        retry_on_overflow = (metadata.prev_producer_id == producer_id and producer_epoch == EPOCH_MAX
                             and metadata.producer_epoch == 0)
        retry_on_epoch_bump = metadata.producer_epoch == producer_epoch + 1
        if state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            valid_epoch = retry_on_epoch_bump
        elif state in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
            valid_epoch = retry_on_epoch_bump or retry_on_overflow or producer_epoch == metadata.producer_epoch
        else:
            valid_epoch = producer_epoch == metadata.producer_epoch
        retry = retry_on_epoch_bump or retry_on_overflow
        if metadata.producer_id != producer_id and not retry_on_overflow:
            return Errors.INVALID_PRODUCER_ID_MAPPING, -1, -1
        if not valid_epoch:
            return Errors.PRODUCER_FENCED, -1, -1
        current = Errors.NONE, metadata.producer_id, metadata.producer_epoch
        if state == TransactionState.ONGOING:
            return await self._end_v2(metadata, commit, no_partition_added=False)
        if state == TransactionState.COMPLETE_COMMIT:
            if commit:
                return current if retry else (Errors.INVALID_TXN_STATE, -1, -1)
            return (Errors.INVALID_TXN_STATE, -1, -1) if retry else await self._end_v2(metadata, False, True)
        if state == TransactionState.COMPLETE_ABORT:
            if not commit:
                return current if retry else await self._end_v2(metadata, False, True)
            return Errors.INVALID_TXN_STATE, -1, -1
        if state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
            if commit == (state == TransactionState.PREPARE_COMMIT):
                return Errors.CONCURRENT_TRANSACTIONS, -1, -1
            return Errors.INVALID_TXN_STATE, -1, -1
        if state == TransactionState.EMPTY and not commit:
            return await self._end_v2(metadata, False, True)
        return Errors.INVALID_TXN_STATE, -1, -1

    async def _end_v2(self, metadata: TransactionMetadata, commit: bool,
                      no_partition_added: bool) -> tuple[Errors, int, int]:
        try:
            done = await self._end(metadata, commit, TV_2, no_partition_added)
        except TxnError as exc:
            return exc.code, -1, -1
        return Errors.NONE, done.producer_id, done.producer_epoch

    # -- describing ----------------------------------------------------------------

    async def handle_describe_transactions(self, request, body: dict) -> dict:
        """TransactionCoordinator.handleDescribeTransactions for each id the principal may
        DESCRIBE (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the others), showing only the
        partitions of topics it may DESCRIBE."""
        states = []
        for transactional_id in body["transactional_ids"]:
            if self.auth.authorize(request, DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
                state = self._describe(transactional_id)
            else:
                state = {"error_code": Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                         "transactional_id": transactional_id}
            if state.get("topics"):
                state["topics"] = [topic for topic in state["topics"]
                                   if self.auth.authorize(request, DESCRIBE, ResourceType.TOPIC, topic["topic"])]
            states.append(state)
        return {"throttle_time_ms": 0, "transaction_states": states}

    def _describe(self, transactional_id: str) -> dict:
        if not transactional_id:
            return {"error_code": Errors.INVALID_REQUEST, "transactional_id": transactional_id}
        if self._resigned(transactional_id):
            return {"error_code": Errors.NOT_COORDINATOR, "transactional_id": transactional_id}
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.state == TransactionState.DEAD:  # Dead: being expired
            return {"error_code": Errors.TRANSACTIONAL_ID_NOT_FOUND, "transactional_id": transactional_id}
        topics: dict[str, list[int]] = {}
        for topic, partition in sorted(metadata.partitions):
            topics.setdefault(topic, []).append(partition)
        return {"error_code": Errors.NONE, "transactional_id": transactional_id,
                "transaction_state": STATE_NAMES[metadata.state], "transaction_timeout_ms": metadata.txn_timeout_ms,
                "transaction_start_time_ms": metadata.txn_start_timestamp_ms, "producer_id": metadata.producer_id,
                "producer_epoch": metadata.producer_epoch,
                "topics": [{"topic": topic, "partitions": partitions} for topic, partitions in topics.items()]}

    async def handle_list_transactions(self, request, body: dict) -> dict:
        """TransactionStateManager.listTransactionStates: every id but Dead ones, filtered by
        producer id, by state (a name Kafka does not know is echoed back, not an error), from
        v1 by having run longer than duration_filter ms, and from v2 by a regular expression
        the whole transactional id must match (KIP-1152: java.util.regex, see franz.common.java_regex);
        one that does not compile is INVALID_REGULAR_EXPRESSION."""
        pattern = None
        if body.get("transactional_id_pattern"):
            try:
                pattern = java_pattern(body["transactional_id_pattern"])
            except re.error:
                return {"throttle_time_ms": 0, "error_code": Errors.INVALID_REGULAR_EXPRESSION,
                        "unknown_state_filters": [], "transaction_states": []}
        producer_ids = set(body["producer_id_filters"])
        states = {STATES_BY_NAME[name] for name in body["state_filters"] if name in STATES_BY_NAME}
        unknown = [name for name in body["state_filters"] if name not in STATES_BY_NAME]
        duration_ms = body.get("duration_filter", -1)
        now = now_ms()
        listed = [{"transactional_id": metadata.transactional_id, "producer_id": metadata.producer_id,
                   "transaction_state": STATE_NAMES[metadata.state]}
                  for metadata in self.transactions.values()
                  if metadata.state != TransactionState.DEAD
                  and (not producer_ids or metadata.producer_id in producer_ids)
                  and (not body["state_filters"] or metadata.state in states)
                  and (duration_ms < 0 or now - metadata.txn_start_timestamp_ms > duration_ms)
                  and (pattern is None or pattern.fullmatch(metadata.transactional_id))
                  and not self._resigned(metadata.transactional_id)]
        # only the ids the principal may DESCRIBE (each refusal audited, as Kafka's)
        listed = [state for state in listed if self.auth.authorize(request, DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                                                                   state["transactional_id"])]
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "unknown_state_filters": unknown,
                "transaction_states": listed}

    # -- timeouts ----------------------------------------------------------------

    async def abort_timed_out_transactions(self, now: int | None = None) -> int:
        now = now_ms() if now is None else now
        aborted = 0
        for transactional_id, metadata in list(self.transactions.items()):
            if (metadata.state == TransactionState.ONGOING
                    and now - metadata.txn_start_timestamp_ms > metadata.txn_timeout_ms
                    and not self._resigned(transactional_id)):
                async with self._lock(transactional_id):
                    current = self.transactions.get(transactional_id)
                    if current is metadata:
                        logger.info("Aborting transaction of %s (producer id %d) after its timeout of %d ms",
                                    transactional_id, metadata.producer_id, metadata.txn_timeout_ms)
                        await self._fence_and_abort(metadata)
                        aborted += 1
        return aborted

    async def remove_expired_transactional_ids(self, now: int | None = None) -> int:
        """TransactionStateManager.removeExpiredTransactionalIds: an id with no transaction open
        (Empty, CompleteCommit, CompleteAbort) and no change for transactional.id.expiration.ms is
        written off with a tombstone in __transaction_state, then forgotten; an InitProducerId
        naming it later starts afresh, with a new producer id. As in Kafka, each partition's
        tombstones go in as few batches as its max.message.bytes allows, and an id with a request
        under way (Kafka: a pending transition) waits for the next round."""
        now = now_ms() if now is None else now
        by_partition: dict[int, list[str]] = {}
        for transactional_id, metadata in self.transactions.items():
            if self._should_expire(metadata, now) and not self._resigned(transactional_id):
                by_partition.setdefault(self._partition_of(transactional_id), []).append(transactional_id)
        removed = 0
        for partition, candidates in sorted(by_partition.items()):
            removed += await self._expire(partition, candidates, now)
        if removed:
            logger.info("Removed %d transactional ids idle for more than %d ms", removed, self.expiration_ms)
        return removed

    def _should_expire(self, metadata: TransactionMetadata, now: int) -> bool:
        return (metadata.state in _EXPIRATION_ALLOWED
                and metadata.txn_last_update_timestamp_ms <= now - self.expiration_ms)

    async def _expire(self, partition: int, candidates: list[str], now: int) -> int:
        """Write off the candidates of one partition still expirable, under their locks (each
        taken at once: an id in use by a request is skipped), one batch per max.message.bytes."""
        log = self.replica_manager.log_of((TRANSACTION_STATE_TOPIC, partition))
        if log is None:
            logger.warning("Transaction expiration for partition %s-%d failed because the log config was not "
                           "available, which likely means the partition is not online or is no longer local.",
                           TRANSACTION_STATE_TOPIC, partition)
            return 0
        max_batch_bytes, removed = log.config.max_message_bytes, 0
        async with contextlib.AsyncExitStack() as held:
            expiring: list[tuple[str, TransactionMetadata]] = []
            for transactional_id in candidates:
                metadata = self.transactions.get(transactional_id)
                if (self._lock.in_use(transactional_id) or metadata is None
                        or not self._should_expire(metadata, now)):
                    continue
                await held.enter_async_context(self._lock(transactional_id))  # free, so taken at once
                expiring.append((transactional_id, metadata))
            for batch, written_off in _tombstone_batches(expiring, now, max_batch_bytes):
                try:
                    await self._append_to_log(partition, batch)
                except TxnError as exc:
                    logger.warning("Failed to write the tombstones of %d expired transactional ids to %s-%d: %s",
                                   len(written_off), TRANSACTION_STATE_TOPIC, partition, exc.code.name)
                    continue
                for transactional_id, metadata in written_off:
                    if self.transactions.get(transactional_id) is metadata:
                        del self.transactions[transactional_id]
                        removed += 1
        return removed

    async def _every(self, interval_ms: int, job: Callable[[], Awaitable[int]], what: str) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            try:
                await job()
            except Exception:
                logger.exception("%s failed", what)


def _tombstone_batches(expiring: list[tuple[str, TransactionMetadata]], timestamp: int,
                       max_batch_bytes: int) -> list[tuple[bytes, list[tuple[str, TransactionMetadata]]]]:
    """The ids' tombstones as batches of at most max_batch_bytes (a batch holds at least one),
    as MemoryRecordsBuilder.hasRoomFor fills them: each batch with the ids it writes off."""
    batches: list[tuple[bytes, list[tuple[str, TransactionMetadata]]]] = []
    builder: MemoryRecordsBuilder | None = None
    members: list[tuple[str, TransactionMetadata]] = []
    for entry in expiring:
        key = transaction_log.key_bytes(entry[0])
        if builder is not None and builder.uncompressed_size_in_bytes + record_size_in_bytes(
                len(members), 0, len(key), -1) > max_batch_bytes:
            batches.append((builder.build_bytes(), members))
            builder, members = None, []
        if builder is None:
            builder = MemoryRecordsBuilder()
        builder.append(SimpleRecord(None, key, timestamp))
        members.append(entry)
    if builder is not None:
        batches.append((builder.build_bytes(), members))
    return batches
