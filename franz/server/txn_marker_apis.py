"""WriteTxnMarkers: a transaction's COMMIT or ABORT marker written into partitions this broker
leads, at a transaction coordinator's (or an operator's) request (KafkaApis.handleWriteTxnMarkersRequest).

franz's own transaction coordinator writes its markers in-process; this API is
the one `kafka-transactions.sh abort` (Admin.abortTransaction) uses to end a
hanging transaction, whose coordinator has forgotten it, straight at the
partition. Each marker is one control batch per partition, appended as the
coordinator appends (AppendOrigin.COORDINATOR): the producer state checks the
producer epoch (INVALID_PRODUCER_EPOCH for an older one; from v2, a marker of
transaction version 2 must also be newer than the epoch of an open transaction,
its coordinator having bumped it to end the transaction) and the coordinator
epoch (TRANSACTION_COORDINATOR_FENCED), a partition this broker lacks is
UNKNOWN_TOPIC_OR_PARTITION, and a marker landing in `__consumer_offsets` is
told to the group coordinator, which commits or drops the transaction's offsets.
"""

from __future__ import annotations

from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC
from franz.protocol.errors import Errors
from franz.records.builder import build_control_batch
from franz.records.control import ControlRecordType
from franz.server.auth_helper import ALTER, CLUSTER_ACTION, CLUSTER_NAME, AuthHelper
from franz.server.cluster_authorization import authorize_cluster_operation
from franz.server.standard_authorizer import ResourceType
from franz.storage.producer_append_info import AppendOrigin


class TxnMarkerApis:
    def __init__(self, replica_manager, group_coordinator) -> None:
        self.replica_manager = replica_manager
        self.group_coordinator = group_coordinator
        self.auth = AuthHelper()  # the broker's, once registered

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("WriteTxnMarkers", self.handle_write_txn_markers)

    async def handle_write_txn_markers(self, request, body: dict) -> dict:
        # KafkaApis: ALTER on the cluster (asked without a denial's audit line), else CLUSTER_ACTION,
        # whose refusal fails the whole request.
        if not self.auth.authorize(request, ALTER, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=False):
            authorize_cluster_operation(self.auth, request, CLUSTER_ACTION)
        return {"markers": [await self._write(marker) for marker in body["markers"]]}

    async def _write(self, marker: dict) -> dict:
        producer_id, commit = marker["producer_id"], marker["transaction_result"]
        control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
        rm = self.replica_manager
        entries = {}
        unknown = {}
        for topic in marker["topics"]:
            for index in topic["partition_indexes"]:
                if rm.get_partition(topic["name"], index) is None:  # answered before any batch is built
                    unknown[(topic["name"], index)] = {"error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION}
                    continue
                # A producer id or epoch no marker can carry raises here (withEndTransactionMarker),
                # failing the whole request as in Kafka.
                entries[(topic["name"], index)] = build_control_batch(
                    control, producer_id=producer_id, producer_epoch=marker["producer_epoch"],
                    coordinator_epoch=marker["coordinator_epoch"])
        results = unknown
        if entries:
            results |= await rm.run_on_append_thread(rm.append_records, -1, entries, AppendOrigin.COORDINATOR, None,
                                                     marker["transaction_version"])
        written = [key for key, result in results.items() if result["error_code"] == Errors.NONE]
        rm.on_appended(written)
        for topic, index in written:
            if topic == OFFSETS_TOPIC and self.group_coordinator is not None:
                self.group_coordinator.on_transaction_marker(index, producer_id, commit)
        topics: dict[str, list[dict]] = {}
        for (topic, index), result in results.items():
            topics.setdefault(topic, []).append({"partition_index": index, "error_code": result["error_code"]})
        return {"producer_id": producer_id,
                "topics": [{"name": name, "partitions": partitions} for name, partitions in topics.items()]}
