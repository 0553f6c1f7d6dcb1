"""Offsets in transactions on a real in-process KafkaServer: AddOffsetsToTxn, TxnOffsetCommit,
the markers that make them committed or drop them, and their load after a restart.

Each scenario drives the transaction coordinator and the group coordinator the way
their request handlers are driven, on the server's own loop, over its real logs.
"""

from __future__ import annotations

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC, load_partition_transactional
from franz.protocol.errors import Errors
from tests.coordinator.group.test_group_coordinator import _Request, run, stable_single_member_group

TIMEOUT_MS = 60_000


class _TransactionsV1(_Request):
    """AddOffsetsToTxn, TxnOffsetCommit and EndTxn v4: a transactions-v1 client's versions."""
    api_version = 4


class _TransactionsV2(_Request):
    """TxnOffsetCommit and EndTxn v5: a transactions-v2 client (KIP-890 part 2)."""
    api_version = 5


async def _begin(server, transactional_id: str, group_id: str) -> tuple[int, int]:
    """A producer id and epoch whose ongoing transaction holds the group's offsets partition;
    topic t, whose offsets the tests commit, exists."""
    if server.metadata.get("t") is None:
        await server.controller.create_topic("t", 1, {})
    producer_id, epoch, error = await server.transaction_coordinator.init_producer_id(
        transactional_id, TIMEOUT_MS, -1, -1)
    assert error == Errors.NONE
    added = await _add_offsets(server, transactional_id, producer_id, epoch, group_id)
    assert added == Errors.NONE
    return producer_id, epoch


async def _add_offsets(server, transactional_id: str, producer_id: int, epoch: int, group_id: str) -> int:
    answer = await server.transaction_coordinator.handle_add_offsets_to_txn(_TransactionsV1(), {
        "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": epoch,
        "group_id": group_id})
    return answer["error_code"]


async def _txn_commit(server, transactional_id: str, producer_id: int, epoch: int, group_id: str, offset: int,
                      generation: int = -1, member_id: str = "", request=_TransactionsV1()) -> int:
    answer = await server.group_coordinator.handle_txn_offset_commit(request, {
        "transactional_id": transactional_id, "group_id": group_id, "producer_id": producer_id,
        "producer_epoch": epoch, "generation_id": generation, "member_id": member_id, "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": "m"}]}]})
    return answer["topics"][0]["partitions"][0]["error_code"]


async def _end(server, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> int:
    answer = await server.transaction_coordinator.handle_end_txn(_TransactionsV1(), {
        "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": epoch,
        "committed": commit})
    return answer["error_code"]


async def _end_v2(server, transactional_id: str, producer_id: int, epoch: int, commit: bool) -> tuple[int, int, int]:
    answer = await server.transaction_coordinator.handle_end_txn(_TransactionsV2(), {
        "transactional_id": transactional_id, "producer_id": producer_id, "producer_epoch": epoch,
        "committed": commit})
    return answer["error_code"], answer["producer_id"], answer["producer_epoch"]


async def _fetch(server, group_id: str, require_stable: bool) -> tuple[int, int]:
    answer = await server.group_coordinator.handle_offset_fetch(_Request(), {"require_stable": require_stable,
        "groups": [{"group_id": group_id, "topics": [{"name": "t", "partition_indexes": [0]}]}]})
    partition = answer["groups"][0]["topics"][0]["partitions"][0]
    return partition["committed_offset"], partition["error_code"]


def test_txn_offsets_are_committed_by_the_commit_marker_and_dropped_by_an_abort(tmp_path):
    async def scenario(server):
        producer_id, epoch = await _begin(server, "tx", "g")
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 10) == Errors.NONE
        assert await _fetch(server, "g", require_stable=False) == (-1, Errors.NONE)
        assert await _fetch(server, "g", require_stable=True) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
        assert await _end(server, "tx", producer_id, epoch, commit=True) == Errors.NONE
        assert await _fetch(server, "g", require_stable=True) == (10, Errors.NONE)

        assert await _add_offsets(server, "tx", producer_id, epoch, "g") == Errors.NONE
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 20) == Errors.NONE
        assert await _end(server, "tx", producer_id, epoch, commit=False) == Errors.NONE
        assert await _fetch(server, "g", require_stable=True) == (10, Errors.NONE)

        # the records went as transactional batches of the producer, each closed by its marker
        log = server.replica_manager.log_of((OFFSETS_TOPIC, server.group_coordinator.partition_for("g")))
        seen: list = []
        load_partition_transactional(
            log, lambda key, value, offset, pid: seen.append(("record", serde.read_key(key).group, pid)),
            lambda pid, commit, offset: seen.append(("marker", commit, pid)))
        assert seen == [("record", "g", producer_id), ("marker", True, producer_id),
                        ("record", "g", producer_id), ("marker", False, producer_id)]
    run(tmp_path, scenario)


class _TransactionsV1BeforeAbortable(_Request):
    """TxnOffsetCommit v3: before TRANSACTION_ABORTABLE (KIP-890)."""
    api_version = 3


def test_txn_offset_commit_needs_the_partition_in_the_transaction_and_the_current_epoch(tmp_path):
    """AddPartitionsToTxnManager's answers: a partition the transaction does not hold is
    TRANSACTION_ABORTABLE from v4 and INVALID_TXN_STATE before; a fenced epoch is
    INVALID_PRODUCER_EPOCH."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {})
        producer_id, epoch, _ = await server.transaction_coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 1) == Errors.TRANSACTION_ABORTABLE
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 1,
                                 request=_TransactionsV1BeforeAbortable()) == Errors.INVALID_TXN_STATE
        assert await _add_offsets(server, "tx", producer_id, epoch + 1, "g") == Errors.PRODUCER_FENCED
        assert await _add_offsets(server, "tx", producer_id + 1, epoch, "g") == Errors.INVALID_PRODUCER_ID_MAPPING
        assert await _add_offsets(server, "tx", producer_id, epoch, "g") == Errors.NONE
        assert await _txn_commit(server, "tx", producer_id, epoch + 1, "g", 1) == Errors.INVALID_PRODUCER_EPOCH
        assert await _txn_commit(server, "tx", producer_id, epoch, "", 1) == Errors.INVALID_GROUP_ID
        assert await _fetch(server, "g", require_stable=True) == (-1, Errors.NONE)
    run(tmp_path, scenario)


def test_a_transactions_v2_commit_adds_the_offsets_partition_itself_and_its_end_bumps_the_epoch(tmp_path):
    """KIP-890 part 2: TxnOffsetCommit v5 needs no AddOffsetsToTxn (the commit adds the group's
    offsets partition to the transaction); EndTxn v5 writes the markers with the epoch bumped
    and hands the producer that epoch, so the old one is fenced."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {})
        producer_id, epoch, _ = await server.transaction_coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
        v2 = _TransactionsV2()
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 10, request=v2) == Errors.NONE
        offsets_partition = (OFFSETS_TOPIC, server.group_coordinator.partition_for("g"))
        assert server.transaction_coordinator.transactions["tx"].partitions == {offsets_partition}
        assert await _fetch(server, "g", require_stable=True) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
        assert await _end_v2(server, "tx", producer_id, epoch, commit=True) == (Errors.NONE, producer_id, epoch + 1)
        assert await _fetch(server, "g", require_stable=True) == (10, Errors.NONE)
        # The retry of that end is answered with what it handed out; the old epoch is fenced now.
        assert await _end_v2(server, "tx", producer_id, epoch, commit=True) == (Errors.NONE, producer_id, epoch + 1)
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 20, request=v2) == \
            Errors.INVALID_PRODUCER_EPOCH
        assert await _txn_commit(server, "tx", producer_id, epoch + 1, "g", 20, request=v2) == Errors.NONE
        assert await _end_v2(server, "tx", producer_id, epoch + 1, commit=False) == (
            Errors.NONE, producer_id, epoch + 2)
        assert await _fetch(server, "g", require_stable=True) == (10, Errors.NONE)
        log = server.replica_manager.log_of(offsets_partition)
        markers: list = []
        load_partition_transactional(log, lambda key, value, offset, pid: None,
                                     lambda pid, commit, offset: markers.append(commit))
        assert markers == [True, False]
        assert log.producer_state_manager.last_entry(producer_id).producer_epoch == epoch + 2
    run(tmp_path, scenario)


def test_txn_offset_commit_checks_member_and_generation_when_given(tmp_path):
    async def scenario(server):
        member_id, generation = await stable_single_member_group(server, "g")
        producer_id, epoch = await _begin(server, "tx", "g")
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 5, generation, "stranger") \
            == Errors.UNKNOWN_MEMBER_ID
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 5, generation + 1, member_id) \
            == Errors.ILLEGAL_GENERATION
        producer_b, epoch_b = await _begin(server, "tx-b", "unknown-group")
        assert await _txn_commit(server, "tx-b", producer_b, epoch_b, "unknown-group", 5, 3, "m") \
            == Errors.ILLEGAL_GENERATION
        # no member named: taken from a group with members (older clients send none)
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 5) == Errors.NONE
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 6, generation, member_id) == Errors.NONE
        assert await _end(server, "tx", producer_id, epoch, commit=True) == Errors.NONE
        assert await _fetch(server, "g", require_stable=True) == (6, Errors.NONE)
    run(tmp_path, scenario)


def test_a_plain_commit_after_the_txn_offset_wins_when_the_transaction_commits(tmp_path):
    async def scenario(server):
        producer_id, epoch = await _begin(server, "tx", "simple")
        assert await _txn_commit(server, "tx", producer_id, epoch, "simple", 10) == Errors.NONE
        answer = await server.group_coordinator.handle_offset_commit(_Request(), {
            "group_id": "simple", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        assert answer["topics"][0]["partitions"][0]["error_code"] == Errors.NONE
        assert await _end(server, "tx", producer_id, epoch, commit=True) == Errors.NONE
        assert await _fetch(server, "simple", require_stable=True) == (7, Errors.NONE)
    run(tmp_path, scenario)


def test_a_restart_loads_committed_txn_offsets_drops_aborted_ones_and_keeps_open_ones_pending(tmp_path):
    ids: dict[str, tuple[int, int]] = {}

    async def first_life(server):
        for group_id, offset, ending in (("committed", 11, True), ("aborted", 22, False), ("open", 33, None)):
            transactional_id = "tx-" + group_id
            producer_id, epoch = await _begin(server, transactional_id, group_id)
            ids[group_id] = (producer_id, epoch)
            assert await _txn_commit(server, transactional_id, producer_id, epoch, group_id, offset) == Errors.NONE
            if ending is not None:
                assert await _end(server, transactional_id, producer_id, epoch, ending) == Errors.NONE

    async def second_life(server):
        assert await _fetch(server, "committed", require_stable=True) == (11, Errors.NONE)
        assert await _fetch(server, "aborted", require_stable=True) == (-1, Errors.NONE)
        assert await _fetch(server, "open", require_stable=True) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
        assert server.group_coordinator.coordinator.group("open") is not None
        producer_id, epoch = ids["open"]
        assert await _end(server, "tx-open", producer_id, epoch, commit=True) == Errors.NONE
        assert await _fetch(server, "open", require_stable=True) == (33, Errors.NONE)

    async def third_life(server):
        assert await _fetch(server, "open", require_stable=True) == (33, Errors.NONE)
        assert await _fetch(server, "aborted", require_stable=True) == (-1, Errors.NONE)

    run(tmp_path, first_life)
    run(tmp_path, second_life)
    run(tmp_path, third_life)


def test_deleting_a_group_tombstones_its_pending_txn_offsets(tmp_path):
    async def scenario(server):
        producer_id, epoch = await _begin(server, "tx", "gone")
        assert await _txn_commit(server, "tx", producer_id, epoch, "gone", 10) == Errors.NONE
        deleted = await server.group_coordinator.handle_delete_groups(_Request(), {"groups_names": ["gone"]})
        assert deleted["results"] == [{"group_id": "gone", "error_code": Errors.NONE}]
        assert await _fetch(server, "gone", require_stable=True) == (-1, Errors.NONE)
        assert await _end(server, "tx", producer_id, epoch, commit=True) == Errors.NONE
        assert await _fetch(server, "gone", require_stable=True) == (-1, Errors.NONE)
        assert server.group_coordinator.coordinator.group("gone") is None  # nothing brought it back
    run(tmp_path, scenario)


def test_with_verification_off_a_v1_commit_is_written_unasked_as_kafka_writes_it(tmp_path):
    """transaction.partition.verification.enable=false: ReplicaManager does not ask the
    transaction coordinator about a v0-4 TxnOffsetCommit, so one outside any transaction is
    written (and stays pending: the hanging transaction KIP-890 exists to prevent); a v5
    commit still adds the partition to its transaction."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {})
        producer_id, epoch, _ = await server.transaction_coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1)
        assert await _txn_commit(server, "tx", producer_id, epoch, "g", 1) == Errors.NONE
        assert await _fetch(server, "g", require_stable=True) == (-1, Errors.UNSTABLE_OFFSET_COMMIT)
        assert server.transaction_coordinator.transactions["tx"].state.name == "EMPTY"
        other, other_epoch, _ = await server.transaction_coordinator.init_producer_id("tx-2", TIMEOUT_MS, -1, -1)
        assert await _txn_commit(server, "tx-2", other, other_epoch, "h", 1, request=_TransactionsV2()) == Errors.NONE
        assert server.transaction_coordinator.transactions["tx-2"].state.name == "ONGOING"
    run(tmp_path, scenario, **{"transaction.partition.verification.enable": "false"})
