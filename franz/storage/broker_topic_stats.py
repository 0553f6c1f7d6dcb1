"""BrokerTopicStats: the broker's per-topic and all-topics meters of produce and fetch traffic
(org.apache.kafka.storage.log.metrics.BrokerTopicStats and BrokerTopicMetrics).

Exported as kafka_server_BrokerTopicMetrics_<name>_total, with a `topic` label for a topic's
series and none for the all-topics one, as Kafka's JMX names them (a `topic=` tag or none):
BytesInPerSec, MessagesInPerSec, BytesOutPerSec, BytesRejectedPerSec, TotalProduceRequestsPerSec,
FailedProduceRequestsPerSec, TotalFetchRequestsPerSec, FailedFetchRequestsPerSec,
ProduceMessageConversionsPerSec and the share
groups' Total/Failed ShareFetch and ShareAcknowledgement RequestsPerSec; and for all
topics only, as in Kafka, the validation meters InvalidMessageCrcRecordsPerSec,
InvalidOffsetOrSequenceRecordsPerSec and NoKeyCompactedTopicRecordsPerSec.

Invariants, as in Kafka: the all-topics series exist from the start, at 0; a topic's series
appears with its first mark (a mark of 0 included: a fetch answering a topic empty shows its
BytesOutPerSec), each one on its own; a topic's series go when the broker hosts none of its
partitions any more (remove_metrics), and a later mark starts them again from 0.

Appends mark from the event loop and from the append thread, so every mark takes the lock;
a scrape takes it too and reads one consistent snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

# Meter names, in Kafka's order (BrokerTopicMetrics), with what each counts.
METERS: Final = {
    "BytesInPerSec": "Bytes of record batches appended",
    "BytesOutPerSec": "Record bytes in fetch answers",
    "BytesRejectedPerSec": "Bytes of produced batches larger than max.message.bytes",
    "MessagesInPerSec": "Records appended",
    "TotalProduceRequestsPerSec": "Partition appends attempted",
    "TotalFetchRequestsPerSec": "Partition reads of fetch requests",
    "FailedProduceRequestsPerSec": "Partition appends that failed other than by a client's plain mistake",
    "FailedFetchRequestsPerSec": "Partition reads that failed unexpectedly",
    "ProduceMessageConversionsPerSec": "Produced records rebuilt by validation (another codec, offsets redone)",
    "TotalShareFetchRequestsPerSec": "Share fetches, once per topic of each",
    "FailedShareFetchRequestsPerSec": "Share fetches with a partition in error, once per topic of each",
    "TotalShareAcknowledgementRequestsPerSec": "Share acknowledgements, once per topic of each",
    "FailedShareAcknowledgementRequestsPerSec": "Share acknowledgements with a partition in error, once per topic",
}
# Meters of all topics only, marked by validation (LogValidator.MetricsRecorder, UnifiedLog).
INVALID_CRC_METER: Final = "InvalidMessageCrcRecordsPerSec"
INVALID_OFFSET_OR_SEQUENCE_METER: Final = "InvalidOffsetOrSequenceRecordsPerSec"
NO_KEY_COMPACTED_METER: Final = "NoKeyCompactedTopicRecordsPerSec"
ALL_TOPICS_METERS: Final = {
    INVALID_CRC_METER: "Produced batches refused for a wrong CRC",
    INVALID_OFFSET_OR_SEQUENCE_METER: "Produced batches refused for their offsets, record count, control flag "
                                      "or sequence",
    NO_KEY_COMPACTED_METER: "Produced records without a key refused by a compacted topic",
}
_PREFIX: Final = "kafka_server_BrokerTopicMetrics_"


class BrokerTopicStats(Collector):
    """Every topic's meters and the all-topics ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all_topics: dict[str, int] = dict.fromkeys((*METERS, *ALL_TOPICS_METERS), 0)
        self._topics: dict[str, dict[str, int]] = {}  # topic -> meter name -> count, for meters marked

    def mark(self, topic: str, meter: str, amount: int = 1) -> None:
        with self._lock:
            self._mark(topic, meter, amount)

    def _mark(self, topic: str, meter: str, amount: int) -> None:
        meters = self._topics.get(topic)
        if meters is None:
            meters = self._topics[topic] = {}
        meters[meter] = meters.get(meter, 0) + amount
        self._all_topics[meter] += amount

    def mark_many(self, topic: str, *marks: tuple[str | None, int]) -> None:
        """Several meters of one topic under one lock; a mark of meter None is skipped."""
        with self._lock:
            for meter, amount in marks:
                if meter is not None:
                    self._mark(topic, meter, amount)

    def mark_topics(self, meter: str, amounts: dict[str, int]) -> None:
        """One meter of several topics under one lock (a fetch's partitions, say)."""
        with self._lock:
            for topic, amount in amounts.items():
                self._mark(topic, meter, amount)

    def mark_all_topics(self, meter: str, amount: int = 1) -> None:
        """One of ALL_TOPICS_METERS, which no topic has."""
        with self._lock:
            self._all_topics[meter] += amount

    def remove_metrics(self, topic: str) -> None:
        with self._lock:
            self._topics.pop(topic, None)

    def value(self, meter: str, topic: str | None = None) -> int | None:
        """A meter's count (all topics when `topic` is None); None for a topic's meter not marked."""
        with self._lock:
            if topic is None:
                return self._all_topics[meter]
            return self._topics.get(topic, {}).get(meter)

    def collect(self) -> Iterator:
        with self._lock:
            all_topics = dict(self._all_topics)
            topics = {topic: dict(meters) for topic, meters in self._topics.items()}
        for meter, documentation in METERS.items():
            family = CounterMetricFamily(_PREFIX + meter, documentation, labels=["topic"])
            family.samples.append(Sample(_PREFIX + meter + "_total", {}, all_topics[meter]))
            for topic, meters in topics.items():
                if meter in meters:
                    family.add_metric([topic], meters[meter])
            yield family
        for meter, documentation in ALL_TOPICS_METERS.items():
            family = CounterMetricFamily(_PREFIX + meter, documentation)
            family.add_metric([], all_topics[meter])
            yield family
