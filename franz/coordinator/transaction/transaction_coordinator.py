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

InitProducerId on an id with an open transaction fences it (epoch bump, abort
markers) and answers CONCURRENT_TRANSACTIONS so the producer retries, as Kafka
does. Open transactions older than their timeout are aborted the same way
every `transaction.abort.timed.out.transaction.cleanup.interval.ms`.

Offsets in transactions: AddOffsetsToTxn adds the group's partition of
`__consumer_offsets` to the transaction (the checks of AddPartitionsToTxn);
the group coordinator writes the TxnOffsetCommit records there (after
`verify_offsets_partition`), and every marker written into that topic is told
to it (`on_transaction_marker`) so those offsets become committed or are dropped.

Operations on one transactional id are serialized by a per-id asyncio lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Final

from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC, load_partition
from franz.coordinator.transaction import transaction_log
from franz.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC
from franz.coordinator.transaction.transaction_metadata import (
    STATE_NAMES,
    STATES_BY_NAME,
    TransactionMetadata,
    TransactionState,
)
from franz.protocol.errors import Errors
from franz.records import ControlRecordType, MemoryRecords
from franz.records.builder import SimpleRecord, build_batch, build_control_batch, now_ms
from franz.storage.producer_append_info import AppendOrigin

logger = logging.getLogger(__name__)

KEY_TYPE_TRANSACTION: Final = 1
EPOCH_MAX: Final = 32767 - 1  # Short.MaxValue - 1: the last epoch a producer may use
ABORT_CHECK_INTERVAL_MS_DEFAULT: Final = 10_000


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
            or (producer_id == metadata.last_producer_id and producer_epoch >= EPOCH_MAX))


class TransactionCoordinator:
    def __init__(self, config, controller, replica_manager, metadata, producer_ids, group_coordinator=None) -> None:
        self.config = config
        self.group_coordinator = group_coordinator  # told of markers in __consumer_offsets; AddOffsetsToTxn
        self.controller = controller
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.producer_ids = producer_ids
        self.partition_count = config["transaction.state.log.num.partitions"]
        self.max_timeout_ms = config["transaction.max.timeout.ms"]
        self.abort_check_ms = int(config.originals.get(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms", ABORT_CHECK_INTERVAL_MS_DEFAULT))
        self.transactions: dict[str, TransactionMetadata] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._reaper: asyncio.Task | None = None

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
                    await self._complete(metadata, metadata.state == TransactionState.PREPARE_COMMIT)
        if loaded:
            logger.info("Loaded %d transactional ids from %d records of %s", len(self.transactions), loaded,
                        TRANSACTION_STATE_TOPIC)
        self._reaper = asyncio.get_running_loop().create_task(self._abort_timed_out_periodically())

    async def shutdown(self) -> None:
        reaper, self._reaper = self._reaper, None
        if reaper is not None:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper

    def register(self, apis, group_coordinator=None) -> None:
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
        if not self.controller.coordinator_topic_exists(TRANSACTION_STATE_TOPIC, self.partition_count,
                                                        self._topic_configs()):
            return Errors.COORDINATOR_NOT_AVAILABLE, None, -1, "", -1
        endpoint = self.metadata.endpoint_for(request.listener_name)
        return Errors.NONE, None, self.metadata.node_id, endpoint.host, endpoint.port

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

    def _lock(self, transactional_id: str) -> asyncio.Lock:
        return self._locks.setdefault(transactional_id, asyncio.Lock())

    # -- persistence -------------------------------------------------------------

    async def _persist(self, metadata: TransactionMetadata) -> None:
        """Append the new state; adopt it only once it is in the log."""
        await self._ensure_topic()
        partition = transaction_log.partition_for(metadata.transactional_id, self.partition_count)
        key = (TRANSACTION_STATE_TOPIC, partition)
        payload = build_batch([SimpleRecord(transaction_log.value_bytes(metadata),
                                            transaction_log.key_bytes(metadata.transactional_id))])
        rm = self.replica_manager
        results = await rm.run_on_append_thread(rm.append_records, -1, {key: payload})
        code = results[key]["error_code"]
        if code != Errors.NONE:
            raise TxnError(Errors.COORDINATOR_NOT_AVAILABLE if code != Errors.NOT_LEADER_OR_FOLLOWER
                           else Errors.NOT_COORDINATOR, results[key].get("error_message"))
        rm.on_appended([key])
        self.transactions[metadata.transactional_id] = metadata

    def _write_markers(self, producer_id: int, producer_epoch: int, partitions: set[tuple[str, int]],
                       commit: bool) -> list[tuple[str, int]]:
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
            partition.append_records_to_leader(marker, 1, AppendOrigin.COORDINATOR)
            written.append((topic, index))
        return written

    async def _complete(self, metadata: TransactionMetadata, commit: bool) -> None:
        """From PrepareCommit/PrepareAbort: markers, then CompleteCommit/CompleteAbort."""
        rm = self.replica_manager
        written = await rm.run_on_append_thread(self._write_markers, metadata.producer_id, metadata.producer_epoch,
                                                set(metadata.partitions), commit)
        rm.on_appended(written)
        if self.group_coordinator is not None:  # on the loop, where the group coordinator's state lives
            for topic, index in written:
                if topic == OFFSETS_TOPIC:
                    self.group_coordinator.on_transaction_marker(index, metadata.producer_id, commit)
        done = TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT
        await self._persist(metadata.transition_to(done, now_ms()))

    async def _end(self, metadata: TransactionMetadata, commit: bool) -> None:
        prepare = TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT
        prepared = metadata.transition_to(prepare, now_ms())
        await self._persist(prepared)
        await self._complete(prepared, commit)

    async def _fence_and_abort(self, metadata: TransactionMetadata) -> None:
        """Bump the epoch of an open transaction and abort it with the new epoch."""
        bumped = dataclasses.replace(metadata, producer_epoch=min(metadata.producer_epoch + 1, EPOCH_MAX),
                                     partitions=set(metadata.partitions))
        await self._end(bumped, commit=False)

    # -- handlers ----------------------------------------------------------------

    async def init_producer_id(self, transactional_id: str, timeout_ms: int, producer_id: int,
                               producer_epoch: int) -> tuple[int, int, Errors]:
        if transactional_id == "":
            return -1, -1, Errors.INVALID_REQUEST
        if timeout_ms <= 0 or timeout_ms > self.max_timeout_ms:
            return -1, -1, Errors.INVALID_TRANSACTION_TIMEOUT
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
                last_id, last_epoch = metadata.producer_id, metadata.producer_epoch
                if metadata.producer_epoch >= EPOCH_MAX and (not expected or producer_epoch == metadata.producer_epoch):
                    new_id, new_epoch = self.producer_ids.generate_producer_id(), 0
                    last_epoch = -1  # prepareProducerIdRotation: a new id has no last epoch
                elif not expected or metadata.producer_epoch == -1 or producer_epoch == metadata.producer_epoch:
                    new_id, new_epoch = metadata.producer_id, metadata.producer_epoch + 1
                elif producer_epoch == metadata.last_producer_epoch:
                    # A retry of the bump it did not hear back from: the current identity, no new bump.
                    return metadata.producer_id, metadata.producer_epoch, Errors.NONE
                else:
                    return -1, -1, Errors.PRODUCER_FENCED
                ready = dataclasses.replace(metadata.transition_to(TransactionState.EMPTY, now_ms()),
                                            producer_id=new_id, producer_epoch=new_epoch, txn_timeout_ms=timeout_ms,
                                            txn_start_timestamp_ms=-1, last_producer_id=last_id,
                                            last_producer_epoch=last_epoch)
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

    async def _add_partitions(self, transactional_id: str, producer_id: int, producer_epoch: int,
                              topics: list[dict]) -> list[dict]:
        requested = [(t["name"], p) for t in topics for p in t["partitions"]]
        unknown = {tp for tp in requested if not self.metadata.has_partition(*tp)}
        error = Errors.NONE
        if unknown:
            error = Errors.OPERATION_NOT_ATTEMPTED
        else:
            async with self._lock(transactional_id):
                try:
                    metadata = self._check_producer(transactional_id, producer_id, producer_epoch)
                    ongoing = metadata.transition_to(TransactionState.ONGOING, now_ms())
                    if metadata.state != TransactionState.ONGOING:
                        ongoing.txn_start_timestamp_ms = ongoing.txn_last_update_timestamp_ms
                    ongoing.partitions |= set(requested)
                    await self._persist(ongoing)
                except TxnError as exc:
                    error = exc.code
                except ValueError:
                    error = Errors.INVALID_TXN_STATE
        by_topic: dict[str, list] = {}
        for topic, index in requested:
            code = Errors.UNKNOWN_TOPIC_OR_PARTITION if (topic, index) in unknown else error
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
        metadata = self.transactions.get(transactional_id)
        if metadata is None or metadata.producer_id != producer_id:
            return dict.fromkeys(partitions, Errors.INVALID_PRODUCER_ID_MAPPING)
        if metadata.producer_epoch != producer_epoch:
            return dict.fromkeys(partitions, Errors.PRODUCER_FENCED)
        if metadata.pending_markers:
            return dict.fromkeys(partitions, Errors.CONCURRENT_TRANSACTIONS)
        return {tp: Errors.NONE if tp in metadata.partitions else Errors.TRANSACTION_ABORTABLE for tp in partitions}

    async def handle_add_partitions_to_txn(self, request, body: dict) -> dict:
        if request.api_version <= 3:
            results = await self._add_partitions(body["v3_and_below_transactional_id"],
                                                 body["v3_and_below_producer_id"],
                                                 body["v3_and_below_producer_epoch"], body["v3_and_below_topics"])
            return {"throttle_time_ms": 0, "results_by_topic_v3_and_below": results}
        answers = []
        for transaction in body["transactions"]:
            if transaction["verify_only"]:  # a broker asking whether a produce may open the partition
                results = self._verified(transaction)
            else:
                results = await self._add_partitions(transaction["transactional_id"], transaction["producer_id"],
                                                     transaction["producer_epoch"], transaction["topics"])
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
        """KafkaApis.handleAddOffsetsToTxn: the group's offsets partition joins the transaction."""
        assert self.group_coordinator is not None
        await self.group_coordinator.ensure_offsets_topic()
        partition = self.group_coordinator.partition_for(body["group_id"])
        results = await self._add_partitions(body["transactional_id"], body["producer_id"], body["producer_epoch"],
                                             [{"name": OFFSETS_TOPIC, "partitions": [partition]}])
        return {"throttle_time_ms": 0, "error_code": results[0]["results_by_partition"][0]["partition_error_code"]}

    def verify_offsets_partition(self, transactional_id: str, producer_id: int, producer_epoch: int,
                                 partition: int) -> Errors:
        """For TxnOffsetCommit: the producer's transaction is ongoing and holds that partition."""
        try:
            metadata = self._check_producer(transactional_id, producer_id, producer_epoch)
        except TxnError as exc:
            return exc.code
        if metadata.state != TransactionState.ONGOING or (OFFSETS_TOPIC, partition) not in metadata.partitions:
            return Errors.INVALID_TXN_STATE
        return Errors.NONE

    async def handle_end_txn(self, request, body: dict) -> dict:
        transactional_id, commit = body["transactional_id"], body["committed"]
        async with self._lock(transactional_id):
            try:
                metadata = self._check_producer(transactional_id, body["producer_id"], body["producer_epoch"])
                state = metadata.state
                if state == TransactionState.ONGOING:
                    await self._end(metadata, commit)
                elif (state, commit) in ((TransactionState.COMPLETE_COMMIT, True),
                                         (TransactionState.COMPLETE_ABORT, False)):
                    pass  # a retry of an end that already happened
                else:
                    raise TxnError(Errors.INVALID_TXN_STATE)
            except TxnError as exc:
                return {"throttle_time_ms": 0, "error_code": exc.code}
        return {"throttle_time_ms": 0, "error_code": 0}

    # -- describing ----------------------------------------------------------------

    async def handle_describe_transactions(self, request, body: dict) -> dict:
        """TransactionCoordinator.handleDescribeTransactions for each id asked about."""
        return {"throttle_time_ms": 0,
                "transaction_states": [self._describe(transactional_id) for transactional_id in
                                       body["transactional_ids"]]}

    def _describe(self, transactional_id: str) -> dict:
        if not transactional_id:
            return {"error_code": Errors.INVALID_REQUEST, "transactional_id": transactional_id}
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
        producer id, by state (a name Kafka does not know is echoed back, not an error) and, from
        v1, by having run longer than duration_filter ms."""
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
                  and (duration_ms < 0 or now - metadata.txn_start_timestamp_ms > duration_ms)]
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "unknown_state_filters": unknown,
                "transaction_states": listed}

    # -- timeouts ----------------------------------------------------------------

    async def abort_timed_out_transactions(self, now: int | None = None) -> int:
        now = now_ms() if now is None else now
        aborted = 0
        for transactional_id, metadata in list(self.transactions.items()):
            if (metadata.state == TransactionState.ONGOING
                    and now - metadata.txn_start_timestamp_ms > metadata.txn_timeout_ms):
                async with self._lock(transactional_id):
                    current = self.transactions.get(transactional_id)
                    if current is metadata:
                        logger.info("Aborting transaction of %s (producer id %d) after its timeout of %d ms",
                                    transactional_id, metadata.producer_id, metadata.txn_timeout_ms)
                        await self._fence_and_abort(metadata)
                        aborted += 1
        return aborted

    async def _abort_timed_out_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.abort_check_ms / 1000)
            try:
                await self.abort_timed_out_transactions()
            except Exception:
                logger.exception("Aborting timed-out transactions failed")
