"""TransactionCoordinator's transactions v2 (KIP-890 part 2) on a real in-process KafkaServer:
EndTxn v5 bumps the epoch at every end, takes a new producer id when the epoch runs out,
answers retries with what it handed out, and may abort with nothing open; EndTxn v4 keeps
transactions v1's rules. Driven as the request handlers are, over the server's real logs."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from franz.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC, read_key, read_value
from franz.coordinator.transaction.transaction_metadata import EPOCH_MAX, TransactionState
from franz.coordinator.group.coordinator_loader import load_partition, load_partition_transactional
from franz.protocol.errors import Errors
from franz.storage.unified_log import FetchIsolation
from franz.server.broker_features import TRANSACTION_VERSION
from tests.coordinator.group.test_group_coordinator import run

TIMEOUT_MS = 60_000


class _EndTxn:
    def __init__(self, api_version: int) -> None:
        self.api_version = api_version


async def _end(server, producer_id: int, epoch: int, commit: bool, version: int = 5) -> tuple[int, int, int]:
    answer = await server.transaction_coordinator.handle_end_txn(_EndTxn(version), {
        "transactional_id": "tx", "producer_id": producer_id, "producer_epoch": epoch, "committed": commit})
    return answer["error_code"], answer["producer_id"], answer["producer_epoch"]


async def _new_producer(server) -> tuple[int, int]:
    await server.controller.create_topic("t", 1, {})
    producer_id, epoch, error = await server.transaction_coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
    assert error == Errors.NONE
    return producer_id, epoch


async def _add(server, producer_id: int, epoch: int, version: int = 2) -> int:
    return await server.transaction_coordinator.add_partitions("tx", producer_id, epoch, {("t", 0)}, version)


def _markers(server) -> list[tuple[int, int, bool]]:
    found: list = []
    log = server.replica_manager.log_of(("t", 0))
    load_partition_transactional(log, lambda key, value, offset, pid: None,
                                 lambda pid, commit, offset: found.append((pid, commit)))
    return found


def test_every_v2_end_bumps_the_epoch_and_a_retry_gets_what_the_end_handed_out(tmp_path):
    async def scenario(server):
        producer_id, epoch = await _new_producer(server)
        assert await _add(server, producer_id, epoch) == Errors.NONE
        assert await _end(server, producer_id, epoch, commit=True) == (Errors.NONE, producer_id, epoch + 1)
        assert await _end(server, producer_id, epoch, commit=True) == (Errors.NONE, producer_id, epoch + 1)
        assert await _end(server, producer_id, epoch, commit=False) == (Errors.INVALID_TXN_STATE, -1, -1)
        assert await _add(server, producer_id, epoch) == Errors.PRODUCER_FENCED
        # The same epoch is the next end, not a retry: with nothing open, only an abort may come.
        assert await _end(server, producer_id, epoch + 1, commit=True) == (Errors.INVALID_TXN_STATE, -1, -1)
        assert await _end(server, producer_id, epoch + 1, commit=False) == (Errors.NONE, producer_id, epoch + 2)
        assert await _end(server, producer_id, epoch + 3, commit=False) == (Errors.PRODUCER_FENCED, -1, -1)
        assert await _end(server, producer_id + 1, epoch + 2, commit=False) == (
            Errors.INVALID_PRODUCER_ID_MAPPING, -1, -1)
        metadata = server.transaction_coordinator.transactions["tx"]
        assert (metadata.state, metadata.producer_epoch, metadata.client_transaction_version) == (
            TransactionState.COMPLETE_ABORT, epoch + 2, 2)
        # The marker of the transaction that held t-0 carried the bumped epoch.
        entry = server.replica_manager.log_of(("t", 0)).producer_state_manager.last_entry(producer_id)
        assert entry.producer_epoch == epoch + 1 and _markers(server) == [(producer_id, True)]
    run(tmp_path, scenario)


def test_v1_ends_keep_the_epoch_and_need_an_open_transaction(tmp_path):
    async def scenario(server):
        producer_id, epoch = await _new_producer(server)
        assert await _end(server, producer_id, epoch, commit=False, version=4) == (Errors.INVALID_TXN_STATE, -1, -1)
        assert await _add(server, producer_id, epoch, version=0) == Errors.NONE
        assert await _end(server, producer_id, epoch, commit=True, version=4) == (Errors.NONE, -1, -1)
        assert await _end(server, producer_id, epoch, commit=True, version=4) == (Errors.NONE, -1, -1)  # a retry
        metadata = server.transaction_coordinator.transactions["tx"]
        assert (metadata.producer_epoch, metadata.client_transaction_version) == (epoch, 0)
    run(tmp_path, scenario)


def test_the_end_that_exhausts_the_epoch_hands_over_a_new_producer_id(tmp_path):
    """prepareAbortOrCommit at epoch Short.MaxValue - 1: the markers go out with the last
    epoch there is, and the producer carries on with a new id at epoch 0; a retry that names
    the old id and epoch is answered with the new identity (retryOnOverflow)."""
    async def scenario(server):
        producer_id, _ = await _new_producer(server)
        coordinator = server.transaction_coordinator
        # Epochs run out after 32,766 transactions; start near the end.
        coordinator.transactions["tx"] = dataclasses.replace(coordinator.transactions["tx"],
                                                             producer_epoch=EPOCH_MAX - 1)
        assert await _add(server, producer_id, EPOCH_MAX - 1) == Errors.NONE
        assert await _end(server, producer_id, EPOCH_MAX - 1, commit=True) == (Errors.NONE, producer_id, EPOCH_MAX)
        assert await _add(server, producer_id, EPOCH_MAX) == Errors.NONE
        error, new_id, new_epoch = await _end(server, producer_id, EPOCH_MAX, commit=True)
        assert (error, new_epoch) == (Errors.NONE, 0) and new_id != producer_id
        assert await _end(server, producer_id, EPOCH_MAX, commit=True) == (Errors.NONE, new_id, 0)
        entry = server.replica_manager.log_of(("t", 0)).producer_state_manager.last_entry(producer_id)
        assert entry.producer_epoch == EPOCH_MAX + 1  # Short.MaxValue: the overflow marker's epoch
        assert await _add(server, new_id, 0) == Errors.NONE
        assert await _end(server, new_id, 0, commit=False) == (Errors.NONE, new_id, 1)
        # What the log says of it, as a restarted coordinator reads it back: version 1 values
        # with the previous producer id, the next one while the end was being written, and the
        # client's transaction version.
        written = []
        for partition in range(server.metadata.get(TRANSACTION_STATE_TOPIC).num_partitions):
            load_partition(server.replica_manager.log_of((TRANSACTION_STATE_TOPIC, partition)),
                           lambda key, value, offset: written.append(read_value(read_key(key), value)))
        handover = [m for m in written if m.state == TransactionState.PREPARE_COMMIT and m.next_producer_id != -1]
        assert [(m.producer_id, m.producer_epoch, m.next_producer_id, m.client_transaction_version)
                for m in handover] == [(producer_id, EPOCH_MAX + 1, new_id, 2)]
        completed = [m for m in written if m.state == TransactionState.COMPLETE_COMMIT and m.producer_id == new_id]
        assert [(m.prev_producer_id, m.producer_epoch) for m in completed] == [(producer_id, 0)]
    run(tmp_path, scenario)


def test_a_retried_bump_is_answered_unbumped_but_empties_the_transaction_with_its_timeout(tmp_path):
    """prepareIncrementProducerEpoch: InitProducerId naming the epoch before the last bump is a
    retry of it; the identity stays, yet the id becomes Empty again with the timeout asked for."""
    async def scenario(server):
        producer_id, _ = await _new_producer(server)
        coordinator = server.transaction_coordinator
        assert await coordinator.init_producer_id("tx", TIMEOUT_MS, producer_id, 0) == (producer_id, 1, Errors.NONE)
        assert await _add(server, producer_id, 1, version=0) == Errors.NONE
        assert await _end(server, producer_id, 1, commit=True, version=4) == (Errors.NONE, -1, -1)
        assert await coordinator.init_producer_id("tx", 30_000, producer_id, 0) == (producer_id, 1, Errors.NONE)
        metadata = coordinator.transactions["tx"]
        assert (metadata.state, metadata.producer_epoch, metadata.txn_timeout_ms) == (TransactionState.EMPTY, 1,
                                                                                     30_000)
    run(tmp_path, scenario)


def test_clients_before_v2_of_the_transaction_apis_hear_invalid_producer_epoch_for_a_fenced_one(tmp_path):
    """KafkaApis: PRODUCER_FENCED came with v2 of EndTxn, AddPartitionsToTxn and AddOffsetsToTxn;
    v0-1 clients get INVALID_PRODUCER_EPOCH instead."""
    async def scenario(server):
        producer_id, epoch = await _new_producer(server)
        coordinator = server.transaction_coordinator
        answers = []
        for version in (1, 2):
            ended = await coordinator.handle_end_txn(_EndTxn(version), {
                "transactional_id": "tx", "producer_id": producer_id, "producer_epoch": epoch + 1, "committed": True})
            added = await coordinator.handle_add_partitions_to_txn(_EndTxn(version), {
                "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": producer_id,
                "v3_and_below_producer_epoch": epoch + 1, "v3_and_below_topics": [{"name": "t", "partitions": [0]}]})
            offsets = await coordinator.handle_add_offsets_to_txn(_EndTxn(version), {
                "transactional_id": "tx", "producer_id": producer_id, "producer_epoch": epoch + 1, "group_id": "g"})
            answers.append((ended["error_code"],
                            added["results_by_topic_v3_and_below"][0]["results_by_partition"][0][
                                "partition_error_code"], offsets["error_code"]))
        return answers
    assert run(tmp_path, scenario) == [(Errors.INVALID_PRODUCER_EPOCH,) * 3, (Errors.PRODUCER_FENCED,) * 3]


@pytest.mark.parametrize("transaction_version", [0, 1, 2])
def test_a_new_producer_fences_the_old_one_at_every_transaction_version(tmp_path, transaction_version):
    """prepareFenceProducerEpoch: the coordinator's own abort of an open transaction (here for a
    new producer's InitProducerId) moves the epoch up once at every finalized transaction.version
    (below 2 by the fence, at 2 by the abort), so the old producer is fenced and the new one
    gets the epoch after it; below 2 the end is recorded as a v0 client's."""
    async def scenario(server):
        if transaction_version:
            server.metadata.features.levels[TRANSACTION_VERSION] = transaction_version
        else:
            server.metadata.features.levels.pop(TRANSACTION_VERSION)
        coordinator = server.transaction_coordinator
        producer_id, epoch = await _new_producer(server)
        assert await _add(server, producer_id, epoch) == Errors.NONE
        first = await coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
        ended = coordinator.transactions["tx"]
        fenced = await _add(server, producer_id, epoch)
        for _ in range(100):  # bounded: the abort's markers are written meanwhile
            retried = await coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
            if retried[2] != Errors.CONCURRENT_TRANSACTIONS:
                break
            await asyncio.sleep(0.02)
        return (first[2], (ended.producer_epoch, ended.client_transaction_version), fenced, retried,
                _markers(server))

    first, (aborted_epoch, client_version), fenced, retried, markers = run(tmp_path, scenario)
    assert first == Errors.CONCURRENT_TRANSACTIONS
    assert (aborted_epoch, client_version) == (1, 2 if transaction_version == 2 else 0)
    assert fenced == Errors.PRODUCER_FENCED
    assert retried[1:] == (2, Errors.NONE)
    assert len(markers) == 1 and markers[0][1] is False  # the one abort marker


def test_a_transaction_whose_markers_cannot_be_written_stays_prepared_until_a_retry_writes_them(tmp_path):
    """The end is decided once its prepare is written: if a marker write then fails (a storage
    error, injected here), the producer is answered as Kafka answers after the prepare, the
    transaction stays PrepareCommit (CONCURRENT_TRANSACTIONS to its producer meanwhile), and
    the markers and the completion are written by a background retry."""
    async def scenario(server):
        producer_id, epoch = await _new_producer(server)
        coordinator = server.transaction_coordinator
        write_markers = coordinator._write_markers
        failures = [OSError("injected: the disk went away")]

        def failing_once(*args):
            if failures:
                raise failures.pop()
            return write_markers(*args)

        coordinator._write_markers = failing_once
        assert await _add(server, producer_id, epoch) == Errors.NONE
        assert await _end(server, producer_id, epoch, commit=True) == (Errors.NONE, producer_id, epoch + 1)
        assert coordinator.transactions["tx"].state == TransactionState.PREPARE_COMMIT
        assert await _add(server, producer_id, epoch + 1) == Errors.CONCURRENT_TRANSACTIONS
        for _ in range(100):  # bounded: the first retry comes after 100 ms
            if coordinator.transactions["tx"].state == TransactionState.COMPLETE_COMMIT:
                break
            await asyncio.sleep(0.05)
        assert coordinator.transactions["tx"].state == TransactionState.COMPLETE_COMMIT
        assert _markers(server) == [(producer_id, True)]
        assert await _add(server, producer_id, epoch + 1) == Errors.NONE
    run(tmp_path, scenario)


def test_an_idle_transactional_id_expires_with_a_tombstone_and_then_starts_afresh(tmp_path):
    """TransactionStateManager.removeExpiredTransactionalIds: an id unchanged for
    transactional.id.expiration.ms with no transaction open gets a tombstone in
    __transaction_state and is forgotten (a restart does not bring it back); one with a
    transaction open is kept; InitProducerId then hands out a new producer id."""
    async def scenario(server):
        coordinator = server.transaction_coordinator
        producer_id, epoch = await _new_producer(server)
        assert await coordinator.remove_expired_transactional_ids() == 0  # not idle for long enough
        assert await _add(server, producer_id, epoch) == Errors.NONE
        later = coordinator.transactions["tx"].txn_last_update_timestamp_ms + coordinator.expiration_ms
        assert await coordinator.remove_expired_transactional_ids(later) == 0  # Ongoing: kept
        error, producer_id, epoch = await _end(server, producer_id, epoch, commit=True)
        assert error == Errors.NONE and coordinator.transactions["tx"].state == TransactionState.COMPLETE_COMMIT
        later = coordinator.transactions["tx"].txn_last_update_timestamp_ms + coordinator.expiration_ms
        assert await coordinator.remove_expired_transactional_ids(later) == 1
        assert "tx" not in coordinator.transactions
        records: list = []
        for partition in range(server.metadata.get(TRANSACTION_STATE_TOPIC).num_partitions):
            load_partition(server.replica_manager.log_of((TRANSACTION_STATE_TOPIC, partition)),
                           lambda key, value, offset: records.append((read_key(key), value)))
        assert records[-1] == ("tx", None)  # the tombstone, after the id's states
        return producer_id

    old_producer_id = run(tmp_path, scenario, **{"transactional.id.expiration.ms": "60000"})

    async def after_restart(server):
        coordinator = server.transaction_coordinator
        assert "tx" not in coordinator.transactions
        producer_id, epoch, error = await coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
        assert (error, epoch) == (Errors.NONE, 0)
        return producer_id

    assert run(tmp_path, after_restart) != old_producer_id


def test_transactional_ids_keep_no_lock_once_their_requests_are_done(tmp_path):
    """Kafka's lock is its TransactionMetadata's; franz's per-id locks must not outlive their use,
    or a broker meeting new transactional ids for weeks grows a lock for each one it ever saw."""
    async def scenario(server):
        coordinator = server.transaction_coordinator
        for index in range(200):
            _, _, error = await coordinator.init_producer_id(f"tx-{index}", TIMEOUT_MS, -1, -1)
            assert error == Errors.NONE
        return len(coordinator.transactions), len(coordinator._lock)

    assert run(tmp_path, scenario) == (200, 0)


def test_expired_ids_are_written_off_in_batches_of_the_partitions_max_message_bytes(tmp_path):
    """removeExpiredTransactionalIds fills one MemoryRecordsBuilder per __transaction_state
    partition up to its max.message.bytes (hasRoomFor) and appends each batch once; an id whose
    metadata has a transition pending (here: a request holding its lock) waits for the next round."""
    async def scenario(server):
        coordinator = server.transaction_coordinator
        ids = [f"expiring-transactional-id-{index:04d}" for index in range(300)]
        for transactional_id in ids:
            assert (await coordinator.init_producer_id(transactional_id, TIMEOUT_MS, -1, -1))[2] == Errors.NONE
        logs = [server.replica_manager.log_of((TRANSACTION_STATE_TOPIC, partition)) for partition in range(2)]
        ends = [log.log_end_offset for log in logs]
        later = max(metadata.txn_last_update_timestamp_ms for metadata in coordinator.transactions.values())
        async with coordinator._lock(ids[5]):
            assert await coordinator.remove_expired_transactional_ids(later + coordinator.expiration_ms) == 299
        assert list(coordinator.transactions) == [ids[5]]
        batches: list[list[tuple[int, int]]] = []  # per partition: (bytes, records) of each new batch
        for log, end in zip(logs, ends):
            fetched = log.read(end, 1 << 20, FetchIsolation.LOG_END, True)
            batches.append([])
            for batch in fetched.records.batches():
                records = list(batch)
                batches[-1].append((len(batch.to_bytes()), len(records)))
                assert all(record.value is None and record.timestamp == later + coordinator.expiration_ms
                           for record in records)
        assert await coordinator.remove_expired_transactional_ids(later + coordinator.expiration_ms) == 1
        return batches

    batches = run(tmp_path, scenario, **{"message.max.bytes": "2000", "transaction.state.log.num.partitions": "2",
                                         "transactional.id.expiration.ms": "60000"})
    assert sum(count for partition in batches for _, count in partition) == 299
    # A tombstone of these ids takes 41 bytes: every batch but a partition's last is too full for one more.
    tombstone = 41
    for partition in batches:
        assert all(size <= 2000 for size, _ in partition), batches
        assert all(size + tombstone > 2000 for size, _ in partition[:-1]), batches
