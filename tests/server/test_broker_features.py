"""FinalizedFeatures: the levels a new franz starts with and the APIs each level turns on."""

from __future__ import annotations

from franz.server.broker_features import BOOTSTRAP_LEVELS, STREAMS_VERSION, FinalizedFeatures

STREAMS_GROUP_HEARTBEAT, STREAMS_GROUP_DESCRIBE = 88, 89


def test_a_new_cluster_finalizes_streams_version_1_and_serves_the_streams_group_apis():
    """Kafka 4.2+ formats a new cluster at StreamsVersion.LATEST_PRODUCTION, SV_1
    (QuorumFeaturesTest / BootstrapMetadata's expected FeatureLevelRecords)."""
    features = FinalizedFeatures()
    assert BOOTSTRAP_LEVELS[STREAMS_VERSION] == 1
    assert features.level(STREAMS_VERSION) == 1
    assert features.api_enabled(STREAMS_GROUP_HEARTBEAT) and features.api_enabled(STREAMS_GROUP_DESCRIBE)


def test_streams_version_0_turns_off_only_the_streams_group_apis():
    """KafkaApis' isStreamsGroupProtocolEnabled: below SV_1 both APIs answer UNSUPPORTED_VERSION."""
    levels = dict(BOOTSTRAP_LEVELS)
    del levels[STREAMS_VERSION]
    features = FinalizedFeatures(levels)
    assert not features.api_enabled(STREAMS_GROUP_HEARTBEAT)
    assert not features.api_enabled(STREAMS_GROUP_DESCRIBE)
    assert features.api_enabled(68) and features.api_enabled(76)  # the consumer and share groups' stay on


def test_api_versions_names_streams_version_from_v4_and_its_finalized_level():
    """ApiVersionsResponse: a supported feature whose minimum is 0 is left out before v4 (KAFKA-17492)."""
    features = FinalizedFeatures()
    v4 = features.api_versions_fields(4)
    assert {"name": STREAMS_VERSION, "min_version": 0, "max_version": 1} in v4["supported_features"]
    assert {"name": STREAMS_VERSION, "max_version_level": 1, "min_version_level": 1} in v4["finalized_features"]
    assert STREAMS_VERSION not in [f["name"] for f in features.api_versions_fields(3)["supported_features"]]
