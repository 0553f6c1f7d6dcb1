"""The `franz` and `franz-segments` Spark data sources on a local SparkSession against a real broker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.support.broker import BrokerProcess  # noqa: E402

pytestmark = pytest.mark.slow
TIMEOUT_S = 60
# Recent record timestamps: older ones would be deleted by the broker's time retention (7 days).
BASE_TIMESTAMP_MS = int(time.time() * 1000) - 60_000


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> BrokerProcess:
    process = BrokerProcess(tmp_path_factory.mktemp("spark-broker"))
    process.start()
    yield process
    process.stop()


def _create(broker: BrokerProcess, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # kept alive until the result is in
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(TIMEOUT_S)


def _produce(broker: BrokerProcess, topic: str, count: int, partitions: int, start: int = 0) -> list[tuple]:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    sent = []
    for i in range(start, start + count):
        key, value, partition = b"k%d" % i, b"v%d" % i, i % partitions
        producer.produce(topic, key=key, value=value, partition=partition, timestamp=BASE_TIMESTAMP_MS + i,
                         headers=[("h", b"x%d" % i)])
        sent.append((key, value, partition))
    assert producer.flush(TIMEOUT_S) == 0
    return sent


def _reader(spark, broker, **options):
    reader = spark.read.format("franz").option("kafka.bootstrap.servers", broker.bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader


def test_batch_read_of_three_partitions_equals_what_was_produced(spark, broker):
    _create(broker, "three", 3)
    sent = _produce(broker, "three", 600, 3)
    rows = _reader(spark, broker, subscribe="three", includeHeaders="true").load().collect()
    assert len(rows) == 600
    assert sorted((r.key, r.value, r.partition) for r in rows) == sorted(sent)
    for row in rows:
        index = int(row.value[1:])
        assert row.offset == index // 3
        assert row.topic == "three" and row.timestampType == 0
        assert round(row.timestamp.timestamp() * 1000) == BASE_TIMESTAMP_MS + index
        assert [(h.key, h.value) for h in row.headers] == [("h", b"x%d" % index)]


def test_offset_ranges_and_min_partitions(spark, broker):
    _create(broker, "ranges", 2)
    _produce(broker, "ranges", 200, 2)
    df = _reader(spark, broker, subscribe="ranges", minPartitions="8",
                 startingOffsets='{"ranges":{"0":10,"1":-2}}', endingOffsets='{"ranges":{"0":60,"1":-1}}').load()
    assert df.rdd.getNumPartitions() >= 8
    rows = df.collect()
    by_partition = {p: sorted(r.offset for r in rows if r.partition == p) for p in (0, 1)}
    assert by_partition[0] == list(range(10, 60))
    assert by_partition[1] == list(range(0, 100))
    assigned = _reader(spark, broker, assign='{"ranges":[1]}').load()
    assert {r.partition for r in assigned.collect()} == {1}


def test_write_then_read_back(spark, broker):
    _create(broker, "written", 2)
    frame = spark.createDataFrame([(b"a", b"1", 0), (b"b", b"2", 1), (None, b"3", 1)],
                                  "key binary, value binary, partition int")
    frame.write.mode("append").format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("topic", "written").save()
    rows = _reader(spark, broker, subscribe="written").load().collect()
    assert sorted((r.value, r.key, r.partition) for r in rows) == [(b"1", b"a", 0), (b"2", b"b", 1), (b"3", None, 1)]


def test_write_takes_text_columns_a_topic_column_and_headers(spark, broker):
    _create(broker, "routed-a", 1)
    _create(broker, "routed-b", 1)
    frame = spark.createDataFrame(
        [("k1", "v1", "routed-a", [("h", b"x")]), ("k2", "v2", "routed-b", []), (None, "v3", "routed-a", None)],
        "key string, value string, topic string, headers array<struct<key: string, value: binary>>")
    frame.write.mode("append").format("franz").option("kafka.bootstrap.servers", broker.bootstrap).save()
    rows = _reader(spark, broker, subscribe="routed-a,routed-b", includeHeaders="true").load().collect()
    found = sorted(((r.topic, r.value, r.key, [(h.key, h.value) for h in r.headers]) for r in rows))
    assert found == [("routed-a", b"v1", b"k1", [("h", b"x")]), ("routed-a", b"v3", None, []),
                     ("routed-b", b"v2", b"k2", [])]


def test_keyed_rows_land_on_the_partition_of_kafkas_java_partitioner(spark, broker):
    from kafka.partitioner.default import murmur2  # kafka-python's port of the Java client's hash

    _create(broker, "keyed", 5)
    keys = [b"user-%d" % i for i in range(40)]
    frame = spark.createDataFrame([(key, b"v") for key in keys], "key binary, value binary")
    frame.write.mode("append").format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("topic", "keyed").save()
    rows = _reader(spark, broker, subscribe="keyed").load().collect()
    assert sorted((r.key, r.partition) for r in rows) == sorted((key, (murmur2(key) & 0x7FFFFFFF) % 5)
                                                                for key in keys)


def test_write_stream_copies_a_topic_exactly_once_per_checkpoint(spark, broker, tmp_path):
    _create(broker, "stream-in", 2)
    _create(broker, "stream-out", 1)
    _produce(broker, "stream-in", 40, 2)

    def copy() -> None:
        query = spark.readStream.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
            .option("subscribe", "stream-in").option("startingOffsets", "earliest").load() \
            .selectExpr("key", "value").writeStream.format("franz") \
            .option("kafka.bootstrap.servers", broker.bootstrap).option("topic", "stream-out") \
            .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start()
        assert query.awaitTermination(TIMEOUT_S * 2)
    copy()
    _produce(broker, "stream-in", 10, 2, start=40)
    copy()  # from the checkpoint: only the 10 new records
    copied = _reader(spark, broker, subscribe="stream-out").load().collect()
    assert sorted(int(r.value[1:]) for r in copied) == list(range(50))


def test_a_sink_without_a_value_column_is_refused_before_the_job(spark, broker):
    frame = spark.createDataFrame([(b"a",)], "key binary")
    with pytest.raises(Exception, match="needs a 'value' column"):
        frame.write.mode("append").format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
            .option("topic", "x").save()


@pytest.mark.parametrize(("options", "message"), [
    ({"subscribe": "t", "startingOffsets": "{not json"}, "startingOffsets"),
    ({"subscribe": "no-such-topic"}, "UNKNOWN_TOPIC_OR_PARTITION"),
    ({}, "subscribe"),
])
def test_bad_options_fail_before_the_job_with_a_clear_message(spark, broker, options, message):
    with pytest.raises(Exception, match=message):
        _reader(spark, broker, **options).load().collect()


def test_unreachable_bootstrap_servers(spark):
    reader = spark.read.format("franz").option("kafka.bootstrap.servers", "127.0.0.1:1").option("subscribe", "t")
    with pytest.raises(Exception, match="Cannot reach"):
        reader.load().collect()


def test_fail_on_data_loss(spark, broker):
    _create(broker, "lossy", 1)
    _produce(broker, "lossy", 100, 1)
    from confluent_kafka import TopicPartition  # noqa: PLC0415
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    next(iter(admin.delete_records([TopicPartition("lossy", 0, 40)]).values())).result(TIMEOUT_S)
    spec = '{"lossy":{"0":10}}'
    with pytest.raises(Exception, match="Some data may have been lost"):
        _reader(spark, broker, subscribe="lossy", startingOffsets=spec).load().collect()
    rows = _reader(spark, broker, subscribe="lossy", startingOffsets=spec, failOnDataLoss="false").load().collect()
    assert sorted(r.offset for r in rows) == list(range(40, 100))


def test_read_committed_skips_an_aborted_transaction(spark, broker):
    _create(broker, "txn", 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "spark-tx"})
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce("txn", value=b"kept", partition=0)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce("txn", value=b"dropped", partition=0)
    producer.flush(TIMEOUT_S)
    producer.abort_transaction(TIMEOUT_S)
    committed = _reader(spark, broker, subscribe="txn", **{"kafka.isolation.level": "read_committed"}).load()
    assert [r.value for r in committed.collect()] == [b"kept"]
    everything = _reader(spark, broker, subscribe="txn").load()
    assert sorted(r.value for r in everything.collect()) == [b"dropped", b"kept"]


def _stream_to_parquet(spark, broker, topic: str, out: Path, checkpoint: Path, **options) -> None:
    reader = spark.readStream.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("subscribe", topic).option("startingOffsets", "earliest")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = reader.load().selectExpr("partition", "offset", "CAST(value AS STRING) AS value") \
        .writeStream.format("parquet").option("path", str(out)).option("checkpointLocation", str(checkpoint)) \
        .trigger(availableNow=True).start()
    assert query.awaitTermination(TIMEOUT_S * 2)


def test_streaming_restarts_from_its_checkpoint_with_no_duplicate_and_no_gap(spark, broker, tmp_path):
    _create(broker, "stream", 2)
    _produce(broker, "stream", 100, 2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    _stream_to_parquet(spark, broker, "stream", out, checkpoint, maxOffsetsPerTrigger="30")
    assert spark.read.parquet(str(out)).count() == 100
    _produce(broker, "stream", 50, 2, start=100)
    _stream_to_parquet(spark, broker, "stream", out, checkpoint)
    rows = spark.read.parquet(str(out)).collect()
    keys = sorted((r.partition, r.offset) for r in rows)
    assert len(keys) == len(set(keys)) == 150
    assert sorted(int(r.value[1:]) for r in rows) == list(range(150))


def test_processing_time_trigger_reads_new_records(spark, broker):
    _create(broker, "ticking", 1)
    _produce(broker, "ticking", 10, 1)
    query = spark.readStream.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("subscribe", "ticking").option("startingOffsets", "earliest").load() \
        .writeStream.format("memory").queryName("ticking_rows").trigger(processingTime="500 milliseconds").start()
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and spark.table("ticking_rows").count() < 10:
            time.sleep(0.2)
        _produce(broker, "ticking", 5, 1, start=10)
        while time.monotonic() < deadline and spark.table("ticking_rows").count() < 15:
            time.sleep(0.2)
        assert spark.table("ticking_rows").count() == 15
    finally:
        query.stop()


def test_segments_read_equals_the_broker_read(spark, broker):
    _create(broker, "archived", 2)
    _produce(broker, "archived", 300, 2)
    via_broker = _reader(spark, broker, subscribe="archived", includeHeaders="true").load()
    via_files = spark.read.format("franz-segments").load(str(broker.data_dir))
    columns = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    expected = sorted(tuple(r) for r in via_broker.select(*columns).collect())
    archived = via_files.where("topic = 'archived'")
    assert sorted(tuple(r) for r in archived.select(*columns).collect()) == expected
    assert {r.segment for r in archived.select("segment").collect()} == {"00000000000000000000.log"}


def test_a_compacted_topic_reads_with_its_gaps_through_both_sources(spark, tmp_path):
    """Once the cleaner has compacted a topic, the franz source reads every surviving record at its
    original offset across the gaps, and the franz-segments source reads the same from the files."""
    compacting = BrokerProcess(tmp_path / "compacting", {"log.cleaner.backoff.ms": "100"})
    compacting.start()
    try:
        admin = AdminClient({"bootstrap.servers": compacting.bootstrap})
        admin.create_topics([NewTopic("compacted", 1, 1, config={
            "cleanup.policy": "compact", "segment.bytes": "2048", "min.cleanable.dirty.ratio": "0.01"})])[
            "compacted"].result(TIMEOUT_S)
        # Batches under the 2,048-byte segments: a larger one is refused (RECORD_LIST_TOO_LARGE).
        producer = Producer({"bootstrap.servers": compacting.bootstrap, "linger.ms": 0, "batch.size": 1024})
        for round_ in range(20):
            for key in range(5):
                producer.produce("compacted", key=b"key-%d" % key, value=b"round-%d" % round_, partition=0,
                                 timestamp=BASE_TIMESTAMP_MS + round_)
            producer.flush(TIMEOUT_S)
        for i in range(40):  # moves the rounds out of the active segment
            producer.produce("compacted", key=b"filler-%d" % i, value=b"x" * 100, partition=0,
                             timestamp=BASE_TIMESTAMP_MS + 100)
        assert producer.flush(TIMEOUT_S) == 0
        assert compacting.wait_cleaned("compacted", 0, 100, TIMEOUT_S)
        rows = _reader(spark, compacting, subscribe="compacted").load().collect()
        offsets = [r.offset for r in rows]
        assert offsets == sorted(set(offsets)) and len(rows) < 140
        latest = {r.key: (r.value, r.offset) for r in rows}
        assert all(latest[b"key-%d" % k] == (b"round-19", 95 + k) for k in range(5))
        assert sum(1 for r in rows if r.key.startswith(b"key-")) == 5  # only the latest of each survived
        via_files = spark.read.format("franz-segments").load(str(compacting.data_dir / "compacted-0")).collect()
        assert sorted((r.offset, r.key, r.value) for r in via_files) == sorted((r.offset, r.key, r.value)
                                                                               for r in rows)
    finally:
        compacting.stop()


def test_a_time_window_reads_the_records_stamped_in_it(spark, broker):
    """startingTimestamp / endingTimestamp: from the first record at or after the start to the
    first at or after the end, in every partition; by partition, the same with JSON."""
    _create(broker, "stamped", 2)
    _produce(broker, "stamped", 100, 2)  # record i at BASE_TIMESTAMP_MS + i, in partition i % 2
    window = _reader(spark, broker, subscribe="stamped", startingTimestamp=str(BASE_TIMESTAMP_MS + 20),
                     endingTimestamp=str(BASE_TIMESTAMP_MS + 60)).load().collect()
    assert sorted(int(row.value[1:]) for row in window) == list(range(20, 60))
    by_partition = _reader(spark, broker, subscribe="stamped",
                           startingOffsetsByTimestamp=f'{{"stamped":{{"0":{BASE_TIMESTAMP_MS + 90},'
                                                      f'"1":{BASE_TIMESTAMP_MS}}}}}',
                           endingOffsetsByTimestamp=f'{{"stamped":{{"0":{BASE_TIMESTAMP_MS + 10**9},'
                                                    f'"1":{BASE_TIMESTAMP_MS + 9}}}}}').load().collect()
    # an end no record reaches is the partition's end
    assert sorted(int(row.value[1:]) for row in by_partition) == [1, 3, 5, 7, 90, 92, 94, 96, 98]


def test_a_starting_timestamp_no_record_reaches_fails_unless_the_strategy_is_latest(spark, broker):
    _create(broker, "early", 1)
    _produce(broker, "early", 10, 1)
    late = str(BASE_TIMESTAMP_MS + 10**9)
    with pytest.raises(Exception, match=f"No offset matched from request of topic-partition early-0 and "
                                        f"timestamp {late}"):
        _reader(spark, broker, subscribe="early", startingTimestamp=late).load().collect()
    assert _reader(spark, broker, subscribe="early", startingTimestamp=late,
                   startingOffsetsByTimestampStrategy="latest").load().collect() == []
    _create(broker, "two-parts", 2)
    with pytest.raises(Exception, match="you must specify all topics"):
        _reader(spark, broker, subscribe="two-parts",
                startingOffsetsByTimestamp=f'{{"two-parts":{{"0":{BASE_TIMESTAMP_MS}}}}}').load().collect()


@pytest.mark.parametrize(("options", "message"), [
    ({"startingOffsetsByTimestampStrategy": "earliest"}, "must be error or latest"),
    ({"endingTimestamp": "soon"}, "'endingTimestamp' must be milliseconds"),
    ({"startingOffsetsByTimestamp": '{"t":{"0":5}}', "endingOffsetsByTimestamp": '{"t":{"1":9}}'},
     "must name the same partitions"),
    ({"startingOffsetsByTimestamp": '{"t":{"0":9}}', "endingOffsetsByTimestamp": '{"t":{"0":5}}'},
     "The starting timestamp 9 of t-0 is after its ending timestamp 5"),
])
def test_bad_timestamp_options_are_refused_naming_them(options, message):
    from franz.spark.options import OptionError, SourceOptions
    with pytest.raises(OptionError, match=message):
        SourceOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", **options}, streaming=False)
    with pytest.raises(OptionError, match="'endingTimestamp' is for batch queries only"):
        SourceOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", "endingTimestamp": "5"},
                            streaming=True)


def test_min_partitions_divides_ranges_as_sparks_range_calculator_does():
    """Ranges too small for a part of their own stay whole and out of the proportions; a divided
    range's later parts take the remainder."""
    from franz.spark.kafka_source import KafkaInputPartition, split_ranges
    ranges = [KafkaInputPartition("t", 0, 1, 5), KafkaInputPartition("t", 1, 1, 21), KafkaInputPartition("t", 2, 7, 7)]
    assert [(r.partition, r.start, r.end) for r in split_ranges(ranges, 3)] == [(0, 1, 5), (1, 1, 11), (1, 11, 21)]
    ranges = [KafkaInputPartition("t", 0, 0, 10), KafkaInputPartition("t", 1, 0, 20)]
    assert [(r.partition, r.start, r.end) for r in split_ranges(ranges, 5)] == [
        (0, 0, 5), (0, 5, 10), (1, 0, 6), (1, 6, 13), (1, 13, 20)]
    assert split_ranges(ranges, 2) == ranges


def test_available_now_reads_what_was_there_in_micro_batches_of_max_offsets_per_trigger(spark, broker, tmp_path):
    """Trigger.AvailableNow with maxOffsetsPerTrigger, as Spark's Kafka source runs it: every
    record there at the start, at most the cap a micro-batch, then the query stops."""
    _create(broker, "available", 2)
    _produce(broker, "available", 50, 2)
    query = spark.readStream.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("subscribe", "available").option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "10") \
        .load().writeStream.format("memory").queryName("available_rows") \
        .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start()
    assert query.awaitTermination(TIMEOUT_S * 2)
    batches = [progress["numInputRows"] for progress in query.recentProgress if progress["numInputRows"]]
    assert batches == [10] * 5
    assert spark.sql("SELECT count(*) AS n FROM available_rows").collect()[0].n == 50


def test_max_offsets_per_trigger_is_shared_by_backlog_and_starves_no_partition():
    """KafkaMicroBatchStream.rateLimit: shares rounded down, but a share below one record is one."""
    from franz.spark.kafka_source import _prorated
    assert [_prorated(10, backlog, 1003) for backlog in (1000, 2, 1)] == [9, 1, 1]
    assert [_prorated(10, backlog, 50) for backlog in (25, 25)] == [5, 5]


def test_min_offsets_per_trigger_holds_a_micro_batch_until_enough_records_wait(spark, broker, tmp_path):
    """minOffsetsPerTrigger with an hour's maxTriggerDelay: the first batch goes ahead (no batch
    yet), then none until 100 records wait; 50 are too few, 110 are enough. Each produce is one
    batch of one partition, so the offsets move in one step."""
    _create(broker, "held", 1)

    def produce(count: int, start: int) -> None:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 200})
        for index in range(start, start + count):
            producer.produce("held", value=b"v%d" % index, partition=0)
        assert producer.flush(TIMEOUT_S) == 0

    produce(30, 0)
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "0")
    query = spark.readStream.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("subscribe", "held").option("startingOffsets", "earliest").option("minOffsetsPerTrigger", "100") \
        .option("maxTriggerDelay", "1h").load().writeStream.format("memory").queryName("held_rows") \
        .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(processingTime="200 milliseconds").start()
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and spark.table("held_rows").count() < 30:
            time.sleep(0.2)
        produce(50, 30)
        # three more triggers, each answered with no batch (an empty one still reports progress)
        seen = len(query.recentProgress)
        while time.monotonic() < deadline and len(query.recentProgress) < seen + 3:
            time.sleep(0.2)
        assert spark.table("held_rows").count() == 30
        produce(60, 80)
        while time.monotonic() < deadline and spark.table("held_rows").count() < 140:
            time.sleep(0.2)
        batches = [progress["numInputRows"] for progress in query.recentProgress if progress["numInputRows"]]
        assert batches == [30, 110]
    finally:
        query.stop()
        spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")


@pytest.mark.parametrize(("options", "message"), [
    ({"minOffsetsPerTrigger": "20", "maxOffsetsPerTrigger": "10"},
     r"The value of minOffsetPerTrigger\(20\) is higher than the maxOffsetsPerTrigger\(10\)"),
    ({"minOffsetsPerTrigger": "20", "maxTriggerDelay": "soon"}, "'maxTriggerDelay' must be a duration"),
])
def test_bad_trigger_options_are_refused_naming_them(options, message):
    from franz.spark.options import OptionError, SourceOptions
    with pytest.raises(OptionError, match=message):
        SourceOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", **options}, streaming=True)


def test_the_sinks_kafka_options_reach_its_producer_in_the_java_clients_names(spark, broker):
    """Spark hands every kafka.* option to its producer: max.request.size (librdkafka's
    message.max.bytes) refuses a record over it; a setting librdkafka lacks, or a serializer
    (Spark's own refusal), fails the query before it writes, naming the option."""
    def write(value: bytes, **options: str):
        writer = spark.createDataFrame([(value,)], "value binary").write.mode("append").format("franz") \
            .option("kafka.bootstrap.servers", broker.bootstrap).option("topic", "sized")
        for key, setting in options.items():
            writer = writer.option(key, setting)
        writer.save()
    _create(broker, "sized", 1)
    write(bytes(2000), **{"kafka.max.request.size": "100000"})
    with pytest.raises(Exception, match="Message size too large"):
        write(bytes(2000), **{"kafka.max.request.size": "1000"})
    with pytest.raises(Exception, match="Option 'kafka.max.block.ms' is a Java client setting"):
        write(b"x", **{"kafka.max.block.ms": "1000"})
    with pytest.raises(Exception, match="Kafka option 'key.serializer' is not supported"):
        write(b"x", **{"kafka.key.serializer": "org.apache.kafka.common.serialization.StringSerializer"})
    assert len(_reader(spark, broker, subscribe="sized").load().collect()) == 1


def test_the_source_refuses_the_kafka_options_spark_refuses():
    from franz.spark.options import OptionError, SourceOptions
    for name in ("auto.offset.reset", "key.deserializer", "value.deserializer", "enable.auto.commit",
                 "interceptor.classes"):
        with pytest.raises(OptionError, match=f"Kafka option '{name}' is not supported"):
            SourceOptions.parse({"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", f"kafka.{name}": "x"},
                                streaming=False)
