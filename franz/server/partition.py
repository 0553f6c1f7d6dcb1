"""Partition: one topic-partition this node leads (kafka.cluster.Partition).

Owns the leader side of replication for one log: the leader epoch, the ISR and
the high watermark. On a single node the ISR is this node alone, so after every
leader append the high watermark moves to the log end offset, through the same
`maybe_increment_leader_hw` step that follower fetches will drive once there are
followers. acks=-1 produces wait (DelayedProduce) until the high watermark
passes their last offset; `min.insync.replicas` is checked before appending, as
Kafka does, so a produce that cannot be replicated enough is refused unwritten.
As in Kafka 4.x (KAFKA-15583) the minimum is never more than the replication
factor: a topic of one replica with min.insync.replicas=2 takes acks=-1.
"""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.records import MemoryRecords
from franz.server.metadata_cache import LEADER_EPOCH
from franz.storage.producer_append_info import AppendOrigin, VerificationGuard
from franz.storage.unified_log import LogAppendInfo, UnifiedLog


class NotEnoughReplicasError(Exception):
    error_code = Errors.NOT_ENOUGH_REPLICAS


class Partition:
    __slots__ = ("topic", "partition", "log", "leader_epoch", "replicas", "isr")

    def __init__(self, topic: str, partition: int, log: UnifiedLog, node_id: int) -> None:
        self.topic = topic
        self.partition = partition
        self.log = log
        self.leader_epoch = LEADER_EPOCH
        self.replicas = (node_id,)  # the assignment: replication factor 1 on one node
        self.isr = (node_id,)

    def check_current_leader_epoch(self, current_leader_epoch: int) -> Errors:
        """Partition.checkCurrentLeaderEpoch: a client that names the epoch it believes current
        (-1: none) is told whether its metadata is older (FENCED_LEADER_EPOCH) or newer
        (UNKNOWN_LEADER_EPOCH) than this leader's."""
        if current_leader_epoch == -1 or current_leader_epoch == self.leader_epoch:
            return Errors.NONE
        return Errors.FENCED_LEADER_EPOCH if current_leader_epoch < self.leader_epoch else Errors.UNKNOWN_LEADER_EPOCH

    def effective_min_isr(self) -> int:
        """min.insync.replicas, capped at the replication factor (Partition.effectiveMinIsr)."""
        return min(self.log.config.min_insync_replicas, len(self.replicas))

    def append_records_to_leader(self, records: MemoryRecords, required_acks: int,
                                 origin: AppendOrigin = AppendOrigin.CLIENT,
                                 verification_guard: VerificationGuard = VerificationGuard.SENTINEL,
                                 transaction_version: int = 0) -> LogAppendInfo:
        """Partition.appendRecordsToLeader: the coordinators append with their own origin
        (producer epochs checked, no client-only checks such as sequences)."""
        with self.log.lock:
            min_isr = self.effective_min_isr()
            if required_acks == -1 and len(self.isr) < min_isr:
                raise NotEnoughReplicasError(
                    f"The size of the current ISR {set(self.isr)} is insufficient to satisfy the min.isr "
                    f"requirement of {min_isr} for partition {self.topic}-{self.partition}")
            info = self.log.append_as_leader(records, self.leader_epoch, origin, verification_guard,
                                             transaction_version)
            self.maybe_increment_leader_hw()
            return info

    def maybe_increment_leader_hw(self) -> bool:
        """HW = the smallest LEO in the ISR; with this node alone, its own LEO."""
        return self.log.maybe_increment_high_watermark(self.log.log_end_offset) is not None

    def check_enough_replicas_reach_offset(self, required_offset: int) -> tuple[bool, Errors]:
        """For DelayedProduce: has the HW passed `required_offset` with enough ISR members?"""
        if self.log.high_watermark >= required_offset:
            if len(self.isr) < self.effective_min_isr():
                return True, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, Errors.NONE
        return False, Errors.NONE
