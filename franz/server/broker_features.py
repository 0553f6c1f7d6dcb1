"""BrokerFeatures and FinalizedFeatures (KIP-584): the feature flags franz supports and the
levels finalized now, which ApiVersions v3+ tells every client.

A new franz starts with the levels Kafka 4.x formats a new cluster with, for
the features franz implements:

- transaction.version 2 (KIP-890 part 2): transactional producers that read it
  (Kafka's Java client) bump their epoch at every transaction end (EndTxn v5)
  and let the broker add their partitions (Produce v12+, TxnOffsetCommit v5+).
  Clients that do not (librdkafka, kafka-python) keep transactions v1, which the
  coordinator still serves. Below 2 the coordinator records the ends it makes
  itself (aborts of timed-out or fenced transactions) as a v1 client's, and
  below 1 it writes __transaction_state values at version 0.
- group.version 1 (KIP-848): the consumer group protocol. At 0,
  ConsumerGroupHeartbeat and ConsumerGroupDescribe answer UNSUPPORTED_VERSION.
- share.version 1 (KIP-932): share groups, which Kafka 4.2+ enables on a new
  cluster; the Java client's KafkaShareConsumer needs it. At 0 the share group
  APIs answer UNSUPPORTED_VERSION.
- streams.version 1 (KIP-1071): streams groups, which Kafka 4.2+ enables on a
  new cluster (StreamsVersion.LATEST_PRODUCTION is SV_1). At 0
  StreamsGroupHeartbeat and StreamsGroupDescribe answer UNSUPPORTED_VERSION.

UpdateFeatures changes them (franz.server.feature_control_manager). Features
franz lacks (metadata.version and kraft.version of a KRaft quorum,
eligible.leader.replicas.version) are not advertised.
"""

from __future__ import annotations

from typing import Final

TRANSACTION_VERSION: Final = "transaction.version"
GROUP_VERSION: Final = "group.version"
SHARE_VERSION: Final = "share.version"
STREAMS_VERSION: Final = "streams.version"

SUPPORTED_FEATURES: Final[dict[str, tuple[int, int]]] = {GROUP_VERSION: (0, 1), SHARE_VERSION: (0, 1),
                                                          STREAMS_VERSION: (0, 1), TRANSACTION_VERSION: (0, 2)}
BOOTSTRAP_LEVELS: Final[dict[str, int]] = {GROUP_VERSION: 1, SHARE_VERSION: 1, STREAMS_VERSION: 1,
                                           TRANSACTION_VERSION: 2}

# The APIs a feature level turns on (KafkaApis' isConsumerGroupProtocolEnabled,
# isShareGroupProtocolEnabled and isStreamsGroupProtocolEnabled): below it they answer UNSUPPORTED_VERSION.
GATED_APIS: Final[dict[int, tuple[str, int]]] = {
    68: (GROUP_VERSION, 1), 69: (GROUP_VERSION, 1),  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
    76: (SHARE_VERSION, 1), 77: (SHARE_VERSION, 1), 78: (SHARE_VERSION, 1), 79: (SHARE_VERSION, 1),
    90: (SHARE_VERSION, 1), 91: (SHARE_VERSION, 1), 92: (SHARE_VERSION, 1),  # the share group offsets admin
    88: (STREAMS_VERSION, 1), 89: (STREAMS_VERSION, 1),  # StreamsGroupHeartbeat, StreamsGroupDescribe
}


class FinalizedFeatures:
    """The finalized levels in force (a level of 0 is not finalized: the feature is off) and
    their epoch, which moves with every change so a client can tell which set it holds."""

    def __init__(self, levels: dict[str, int] | None = None, epoch: int = 0) -> None:
        self.levels = dict(BOOTSTRAP_LEVELS if levels is None else levels)
        self.epoch = epoch

    def level(self, name: str) -> int:
        return self.levels.get(name, 0)

    def api_enabled(self, api_key: int) -> bool:
        gate = GATED_APIS.get(api_key)
        return gate is None or self.level(gate[0]) >= gate[1]

    def api_versions_fields(self, request_version: int) -> dict:
        """The feature fields of an ApiVersions response (ApiVersionsResponse.createApiVersionsResponse:
        a finalized feature's minimum level is its level). Before v4 a supported feature whose
        minimum is 0 is left out: older clients fail to read one (KAFKA-17492)."""
        return {"supported_features": [{"name": name, "min_version": low, "max_version": high}
                                       for name, (low, high) in SUPPORTED_FEATURES.items()
                                       if request_version >= 4 or low != 0],
                "finalized_features_epoch": self.epoch,
                "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                       for name, level in self.levels.items() if level > 0]}
