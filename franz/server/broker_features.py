"""BrokerFeatures (KIP-584): the feature flags franz supports and the levels it has finalized,
which ApiVersions v3+ tells every client.

franz is one node that never changes its features, so the finalized levels are
those Kafka 4.x formats a new cluster with, for the features franz implements:

- transaction.version 2 (KIP-890 part 2): transactional producers that read it
  (Kafka's Java client) bump their epoch at every transaction end (EndTxn v5)
  and let the broker add their partitions (Produce v12+, TxnOffsetCommit v5+).
  Clients that do not (librdkafka, kafka-python) keep transactions v1, which the
  coordinator still serves.
- group.version 1 (KIP-848): the consumer group protocol.
- share.version 1 (KIP-932): share groups, which Kafka 4.2+ enables on a new
  cluster; the Java client's KafkaShareConsumer needs it.

Features franz lacks (metadata.version and kraft.version of a KRaft quorum,
streams.version, eligible.leader.replicas.version) are not advertised. The epoch says which finalized set a client holds; it never moves.
"""

from __future__ import annotations

from typing import Final

TRANSACTION_VERSION: Final = "transaction.version"
GROUP_VERSION: Final = "group.version"
SHARE_VERSION: Final = "share.version"

SUPPORTED_FEATURES: Final[dict[str, tuple[int, int]]] = {GROUP_VERSION: (0, 1), SHARE_VERSION: (0, 1),
                                                          TRANSACTION_VERSION: (0, 2)}
FINALIZED_FEATURES: Final[dict[str, int]] = {GROUP_VERSION: 1, SHARE_VERSION: 1, TRANSACTION_VERSION: 2}
FINALIZED_FEATURES_EPOCH: Final = 0


def api_versions_fields(request_version: int) -> dict:
    """The feature fields of an ApiVersions response (ApiVersionsResponse.createApiVersionsResponse:
    a finalized feature's minimum level is its level). Before v4 a supported feature whose
    minimum is 0 is left out: older clients fail to read one (KAFKA-17492)."""
    return {"supported_features": [{"name": name, "min_version": low, "max_version": high}
                                   for name, (low, high) in SUPPORTED_FEATURES.items()
                                   if request_version >= 4 or low != 0],
            "finalized_features_epoch": FINALIZED_FEATURES_EPOCH,
            "finalized_features": [{"name": name, "max_version_level": level, "min_version_level": level}
                                   for name, level in FINALIZED_FEATURES.items()]}
