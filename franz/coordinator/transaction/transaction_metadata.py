"""TransactionMetadata: the coordinator's view of one transactional id (kafka.coordinator.transaction).

States and the transitions the coordinator allows (TransactionState.scala):

    Empty ---------> Ongoing <-------------------------------+
      ^                |  \\                                   |
      |       PrepareCommit  PrepareAbort                     |
      |                |        |                             |
      +------- CompleteCommit  CompleteAbort -----------------+
    (Dead: the id expired; PrepareEpochFence: fencing an ongoing transaction)

The numeric values are the `transaction_status` of TransactionLogValue.
"""

from __future__ import annotations

import dataclasses
import enum


class TransactionState(enum.IntEnum):
    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7


# Kafka's TransactionState.name(): what ListTransactions and DescribeTransactions report.
STATE_NAMES: dict[TransactionState, str] = {
    TransactionState.EMPTY: "Empty", TransactionState.ONGOING: "Ongoing",
    TransactionState.PREPARE_COMMIT: "PrepareCommit", TransactionState.PREPARE_ABORT: "PrepareAbort",
    TransactionState.COMPLETE_COMMIT: "CompleteCommit", TransactionState.COMPLETE_ABORT: "CompleteAbort",
    TransactionState.DEAD: "Dead", TransactionState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
STATES_BY_NAME: dict[str, TransactionState] = {name: state for state, name in STATE_NAMES.items()}

VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    TransactionState.EMPTY: frozenset({TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                                       TransactionState.COMPLETE_ABORT}),
    TransactionState.ONGOING: frozenset({TransactionState.ONGOING, TransactionState.EMPTY,
                                         TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT}),
    TransactionState.PREPARE_COMMIT: frozenset({TransactionState.ONGOING}),
    # Transactions v2 may abort with no transaction open (EndTxn v5 from Empty or Complete*).
    TransactionState.PREPARE_ABORT: frozenset({TransactionState.ONGOING, TransactionState.PREPARE_EPOCH_FENCE,
                                               TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                                               TransactionState.COMPLETE_ABORT}),
    TransactionState.COMPLETE_COMMIT: frozenset({TransactionState.PREPARE_COMMIT}),
    TransactionState.COMPLETE_ABORT: frozenset({TransactionState.PREPARE_ABORT}),
    TransactionState.DEAD: frozenset({TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT,
                                      TransactionState.COMPLETE_ABORT}),
    TransactionState.PREPARE_EPOCH_FENCE: frozenset({TransactionState.ONGOING}),
}


@dataclasses.dataclass
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    txn_timeout_ms: int
    state: TransactionState = TransactionState.EMPTY
    partitions: set[tuple[str, int]] = dataclasses.field(default_factory=set)
    txn_start_timestamp_ms: int = -1
    txn_last_update_timestamp_ms: int = -1
    # The producer id before the last transition (Kafka's prevProducerId; persisted from
    # transaction version 1): a producer whose epoch ran out and that never heard of its
    # new id retries with the old one and is answered, not fenced.
    prev_producer_id: int = -1
    # The id a transactions-v2 end hands over when it exhausts the epoch (Kafka's nextProducerId).
    next_producer_id: int = -1
    # The epoch before the last bump, in memory only (Kafka's lastProducerEpoch): a producer
    # that never got the bump's answer retries with it and is answered, not fenced.
    last_producer_epoch: int = -1
    # The transaction version of the client that last added partitions or ended the
    # transaction (TransactionVersion: 0 before KIP-890 part 2, 2 with per-transaction bumps).
    client_transaction_version: int = 0

    def transition_to(self, state: TransactionState, now_ms: int) -> TransactionMetadata:
        """A copy in `state`; the caller persists it before adopting it."""
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise ValueError(f"TransactionalId {self.transactional_id} cannot go from {self.state.name} "
                             f"to {state.name}")
        successor = dataclasses.replace(self, state=state, partitions=set(self.partitions),
                                        txn_last_update_timestamp_ms=now_ms, prev_producer_id=self.producer_id)
        if state in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT, TransactionState.EMPTY):
            successor.partitions = set()
        return successor

    @property
    def pending_markers(self) -> bool:
        return self.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)

    @property
    def epoch_exhausted(self) -> bool:
        """TransactionMetadata.isEpochExhausted: no epoch is left to bump to."""
        return self.producer_epoch >= EPOCH_MAX


EPOCH_MAX = 32767 - 1  # Short.MaxValue - 1: the last epoch a producer may be handed
