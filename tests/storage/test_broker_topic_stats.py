"""BrokerTopicStats: per-topic meters made on first mark, all-topics ones from the start."""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, generate_latest

from franz.storage.broker_topic_stats import METERS, BrokerTopicStats


def _exported(stats: BrokerTopicStats) -> str:
    registry = CollectorRegistry()
    registry.register(stats)
    return generate_latest(registry).decode()


def test_all_topics_series_start_at_zero_and_a_topics_appear_one_meter_at_a_time():
    stats = BrokerTopicStats()
    text = _exported(stats)
    for meter in METERS:
        assert f"kafka_server_BrokerTopicMetrics_{meter}_total 0.0" in text.splitlines()
    stats.mark("t", "BytesOutPerSec", 0)
    stats.mark_many("u", ("BytesInPerSec", 10), ("MessagesInPerSec", 2))
    text = _exported(stats)
    assert 'kafka_server_BrokerTopicMetrics_BytesOutPerSec_total{topic="t"} 0.0' in text
    assert 'BytesInPerSec_total{topic="t"}' not in text
    assert 'kafka_server_BrokerTopicMetrics_BytesInPerSec_total{topic="u"} 10.0' in text
    assert stats.value("MessagesInPerSec") == 2 and stats.value("MessagesInPerSec", "t") is None


def test_validation_meters_are_all_topics_only():
    stats = BrokerTopicStats()
    stats.mark_all_topics("InvalidMessageCrcRecordsPerSec")
    stats.mark_all_topics("NoKeyCompactedTopicRecordsPerSec", 3)
    text = _exported(stats)
    assert "kafka_server_BrokerTopicMetrics_InvalidMessageCrcRecordsPerSec_total 1.0" in text.splitlines()
    assert "kafka_server_BrokerTopicMetrics_NoKeyCompactedTopicRecordsPerSec_total 3.0" in text.splitlines()
    assert "kafka_server_BrokerTopicMetrics_InvalidOffsetOrSequenceRecordsPerSec_total 0.0" in text.splitlines()


def test_removed_topics_start_again_from_zero_and_the_all_topics_counts_keep_theirs():
    stats = BrokerTopicStats()
    stats.mark("t", "BytesInPerSec", 5)
    stats.remove_metrics("t")
    assert stats.value("BytesInPerSec", "t") is None and 'topic="t"' not in _exported(stats)
    stats.mark("t", "BytesInPerSec", 3)
    assert stats.value("BytesInPerSec", "t") == 3 and stats.value("BytesInPerSec") == 8


def test_marks_from_two_threads_all_count():
    """The loop and the append thread mark the same all-topics meters."""
    stats = BrokerTopicStats()

    def mark(topic: str) -> None:
        for _ in range(50_000):
            stats.mark(topic, "TotalProduceRequestsPerSec")

    threads = [threading.Thread(target=mark, args=(topic,)) for topic in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert stats.value("TotalProduceRequestsPerSec") == 100_000
    assert stats.value("TotalProduceRequestsPerSec", "a") == stats.value("TotalProduceRequestsPerSec", "b") == 50_000
