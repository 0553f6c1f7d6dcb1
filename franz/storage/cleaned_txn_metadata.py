"""CleanedTransactionMetadata: the transactions a cleaning pass walks through.

Kafka's LogCleaner keeps this beside its cursor so that it can tell, batch by
batch, whether data belongs to an aborted transaction (it can all go) and
whether a transaction marker may go:

- an ABORT marker is kept, and its AbortedTxn written to the cleaned
  segment's transaction index, while any batch of that transaction was seen
  in this pass; once none is left the marker itself may go;
- a COMMIT marker may go once no batch of its transaction was seen in this
  pass (the cleaner removed them all earlier);
- a control batch with no records (already emptied by an earlier pass) may go.

Aborted transactions are fed in offset order (addAbortedTransactions) and
taken up when the cursor reaches their first offset.
"""

from __future__ import annotations

import heapq

from franz.records import ControlRecordType
from franz.records.record_batch import RecordBatch
from franz.storage.txn_index import AbortedTxn, TransactionIndex


class _AbortedTransactionMetadata:
    __slots__ = ("aborted_txn", "last_observed_batch_offset")

    def __init__(self, aborted_txn: AbortedTxn) -> None:
        self.aborted_txn = aborted_txn
        self.last_observed_batch_offset: int | None = None


class CleanedTransactionMetadata:
    def __init__(self) -> None:
        self._ongoing_committed: set[int] = set()
        self._ongoing_aborted: dict[int, _AbortedTransactionMetadata] = {}
        self._aborted: list[tuple[int, int, AbortedTxn]] = []  # min-heap on first offset
        self._sequence = 0  # keeps heap entries with equal first offsets in arrival order
        self.cleaned_index: TransactionIndex | None = None  # where kept aborts are re-indexed

    def add_aborted_transactions(self, aborted: list[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._aborted, (txn.first_offset, self._sequence, txn))
            self._sequence += 1

    def _consume_aborted_up_to(self, offset: int) -> None:
        heap = self._aborted
        while heap and heap[0][0] <= offset:
            txn = heapq.heappop(heap)[2]
            self._ongoing_aborted.setdefault(txn.producer_id, _AbortedTransactionMetadata(txn))

    def on_control_batch_read(self, batch: RecordBatch) -> bool:
        """Take in a control batch; True if the cleaner may discard it."""
        self._consume_aborted_up_to(batch.last_offset)
        record = next(iter(batch.records()), None)
        if record is None:
            return True  # emptied by an earlier pass
        control_type = ControlRecordType.parse(record.key)
        producer_id = batch.producer_id
        if control_type == ControlRecordType.ABORT:
            aborted = self._ongoing_aborted.pop(producer_id, None)
            if aborted is not None and aborted.last_observed_batch_offset is not None:
                # Data of the transaction is still in the log: keep the marker and its index entry.
                if self.cleaned_index is not None:
                    self.cleaned_index.append(aborted.aborted_txn)
                return False
            return True
        if control_type == ControlRecordType.COMMIT:
            if producer_id in self._ongoing_committed:
                self._ongoing_committed.discard(producer_id)
                return False
            return True
        return False

    def on_batch_read(self, batch: RecordBatch) -> bool:
        """Take in a data batch; True if it belongs to an aborted transaction (it may all go)."""
        self._consume_aborted_up_to(batch.last_offset)
        if not batch.is_transactional:
            return False
        aborted = self._ongoing_aborted.get(batch.producer_id)
        if aborted is not None:
            aborted.last_observed_batch_offset = batch.last_offset
            return True
        self._ongoing_committed.add(batch.producer_id)
        return False
