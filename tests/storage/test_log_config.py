import pytest

from franz.common.config_def import ConfigError
from franz.storage.log_config import DEFAULT_SEGMENT_BYTES, LogConfig


def test_defaults_are_kafka_4_defaults():
    config = LogConfig.from_props()
    assert config.segment_bytes == DEFAULT_SEGMENT_BYTES
    assert config.segment_index_bytes == 10 * 1024 * 1024
    assert config.index_interval_bytes == 4096
    assert config.max_message_bytes == 1024 * 1024 + 12
    assert config.message_timestamp_after_max_ms == 3_600_000
    assert config.cleanup_policy == ("delete",)
    assert config.file_delete_delay_ms == 60_000


def test_broker_synonyms_become_topic_defaults_and_topic_overrides_win():
    broker = {"log.segment.bytes": "2048", "log.retention.ms": "1000", "log.roll.ms": "50"}
    config = LogConfig.from_props({"retention.ms": "5000"}, broker)
    assert config.segment_bytes == 2048
    assert config.segment_ms == 50
    assert config.retention_ms == 5000
    assert config.overrides == {"retention.ms": "5000"}


def test_internal_segment_bytes_wins_over_segment_bytes():
    config = LogConfig.from_props({"segment.bytes": "4096", "internal.segment.bytes": "100"})
    assert config.segment_bytes == 100


def test_compact_policy_is_recognised():
    assert LogConfig.from_props({"cleanup.policy": "compact,delete"}).compact


@pytest.mark.parametrize("key, value", [
    ("segment.bytes", "1"),
    ("cleanup.policy", "shred"),
    ("message.timestamp.type", "Now"),
    ("min.cleanable.dirty.ratio", "2"),
    ("compression.type", "brotli"),
])
def test_bad_topic_values_are_refused_naming_the_key(key, value):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        LogConfig.from_props({key: value})


def test_a_min_compaction_lag_above_the_max_is_refused_as_kafka_refuses_it():
    with pytest.raises(ConfigError, match=r"conflict topic config setting min\.compaction\.lag\.ms \(10\) > "
                                          r"max\.compaction\.lag\.ms \(5\)"):
        LogConfig.from_props({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
    with pytest.raises(ConfigError, match="min.compaction.lag.ms"):  # against the broker's max as well
        LogConfig.from_props({"min.compaction.lag.ms": "10"}, {"log.cleaner.max.compaction.lag.ms": "5"})
    assert LogConfig.from_props({"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5"}).min_compaction_lag_ms == 5
