"""The share-group state RPCs: a persister's calls to the share coordinator (KIP-932;
KafkaApis.handle*ShareGroupStateRequest and ShareCoordinatorService).

InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
DeleteShareGroupState and ReadShareGroupStateSummary name a group and its
share-partitions (topic id, partition); each share-partition is one operation of
the coordinator (franz/coordinator/share/share_coordinator.py), and its error, with
the shard's message, answers that share-partition alone. franz's own share-partition
leaders call the coordinator in-process; these RPCs serve a persister on another
node (or a tool) that found this node with a FindCoordinator of type SHARE. Before
that lookup has made `__share_group_state` there is no shard to ask, and every
share-partition is answered NOT_COORDINATOR.

Kafka brokers do not gate these on share.version (ShareFetch and ShareAcknowledge
are, so no share-partition leader of theirs calls), and neither does franz. As the
service does, a request with an empty group id, no topics or (but for Initialize) a
topic with no partitions is answered with no results. A failed write answers
"Unable to <verb> share group state: <cause>", with the error the coordinator's
writer mapped as CoordinatorOperationExceptionHelper maps it. The share-partitions of one request
run concurrently, each under its own lock; a share-partition named twice runs twice
and answers once, with its last result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from franz.coordinator.share.share_coordinator import (SHARE_GROUP_STATE_TOPIC, ShareCoordinator, ShareStateError,
                                                       ShareStateWriteError, StateBatch)
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors, default_message
from franz.server.auth_helper import CLUSTER_ACTION, AuthHelper
from franz.server.controller import ApiError

NOT_COORDINATOR_MESSAGE: Final = default_message(Errors.NOT_COORDINATOR)

Operation = Callable[[SharePartitionKey, dict], Awaitable[dict]]


class ShareStateApis:
    def __init__(self, coordinator: ShareCoordinator) -> None:
        self.coordinator = coordinator
        self.auth = AuthHelper()  # KafkaApis' checks once registered; every action allowed until then

    def register(self, apis) -> None:
        self.auth = apis.auth
        for name, handler in (("InitializeShareGroupState", self.handle_initialize),
                              ("ReadShareGroupState", self.handle_read), ("WriteShareGroupState", self.handle_write),
                              ("DeleteShareGroupState", self.handle_delete),
                              ("ReadShareGroupStateSummary", self.handle_read_summary)):
            apis.register(name, self._cluster_action(handler))

    def _cluster_action(self, handler):
        """Only brokers call these: authorizeClusterOperation(CLUSTER_ACTION) first, whose
        refusal fails the whole request with CLUSTER_AUTHORIZATION_FAILED."""
        async def handle(request, body: dict) -> dict:
            if not self.auth.authorize_cluster(request, CLUSTER_ACTION):
                refused = Errors.CLUSTER_AUTHORIZATION_FAILED
                raise ApiError(refused, default_message(refused))
            return await handler(request, body)
        return handle

    async def handle_initialize(self, request, body: dict) -> dict:
        async def initialize(key: SharePartitionKey, partition: dict) -> dict:
            await self.coordinator.initialize(key, partition["state_epoch"], partition["start_offset"])
            return {}
        return await self._each(body, initialize, "initialize share group state", require_partitions=False)

    async def handle_read(self, request, body: dict) -> dict:
        async def read(key: SharePartitionKey, partition: dict) -> dict:
            state = await self.coordinator.read(key, partition["leader_epoch"])
            return {"state_epoch": state.state_epoch, "start_offset": state.start_offset,
                    "state_batches": [{"first_offset": b.first_offset, "last_offset": b.last_offset,
                                       "delivery_state": b.delivery_state, "delivery_count": b.delivery_count}
                                      for b in state.state_batches]}
        return await self._each(body, read, "read share group state")

    async def handle_write(self, request, body: dict) -> dict:
        async def write(key: SharePartitionKey, partition: dict) -> dict:
            batches = [StateBatch(b["first_offset"], b["last_offset"], b["delivery_state"], b["delivery_count"])
                       for b in partition["state_batches"]]
            await self.coordinator.write(key, partition["state_epoch"], partition["leader_epoch"],
                                         partition["start_offset"], partition["delivery_complete_count"], batches)
            return {}
        return await self._each(body, write, "write share group state")

    async def handle_delete(self, request, body: dict) -> dict:
        async def delete(key: SharePartitionKey, partition: dict) -> dict:
            await self.coordinator.delete(key, known_partition_only=True)
            return {}
        return await self._each(body, delete, "delete share group state")

    async def handle_read_summary(self, request, body: dict) -> dict:
        async def read_summary(key: SharePartitionKey, partition: dict) -> dict:
            state_epoch, leader_epoch, start_offset, finished = self.coordinator.summary(key)
            return {"state_epoch": state_epoch, "leader_epoch": leader_epoch, "start_offset": start_offset,
                    "delivery_complete_count": finished}
        return await self._each(body, read_summary, "read share group state summary")

    async def _each(self, body: dict, operation: Operation, what: str, require_partitions: bool = True) -> dict:
        group_id, topics = body["group_id"], body["topics"]
        if not group_id or not topics or (require_partitions and any(not t["partitions"] for t in topics)):
            return {"results": []}

        # no state topic, so no shard loaded: the runtime refuses before the shard sees them
        no_shard = self.coordinator.metadata.get(SHARE_GROUP_STATE_TOPIC) is None

        offline = self.coordinator.metadata.offline_partitions

        async def one(key: SharePartitionKey, partition: dict) -> dict:
            # no shard either where the key's state partition is offline (a disk error): resigned
            if no_shard or (offline and (SHARE_GROUP_STATE_TOPIC, self.coordinator.partition_for(key)) in offline):
                return {"partition": key.partition, "error_code": Errors.NOT_COORDINATOR,
                        "error_message": f"Unable to {what}: {NOT_COORDINATOR_MESSAGE}"}
            try:
                answer = await operation(key, partition)
            except ShareStateWriteError as exc:  # its code mapped already, by the coordinator's writer
                return {"partition": key.partition, "error_code": exc.code, "error_message": f"Unable to {what}: {exc}"}
            except ShareStateError as exc:  # the shard's refusal, with its message
                return {"partition": key.partition, "error_code": exc.code, "error_message": str(exc)}
            return {"partition": key.partition, "error_code": Errors.NONE, "error_message": None, **answer}

        keys = [(bytes(topic["topic_id"]), partition) for topic in topics for partition in topic["partitions"]]
        answers = await asyncio.gather(*(one(SharePartitionKey(group_id, topic_id, partition["partition"]), partition)
                                         for topic_id, partition in keys))
        results: dict[bytes, dict[int, dict]] = {}
        for (topic_id, partition), answer in zip(keys, answers):
            results.setdefault(topic_id, {})[partition["partition"]] = answer
        return {"results": [{"topic_id": topic_id, "partitions": list(partitions.values())}
                            for topic_id, partitions in results.items()]}
