"""The `franz` Spark data source: topics as batch and streaming sources and sinks.

The user contract is Spark's Kafka source (schema, option names, offsets JSON),
built on Spark 4's Python Data Source API instead of a JVM jar:

- read: the driver resolves topic-partitions and offset ranges (options.py);
  each range becomes an InputPartition read by one task over the Kafka
  protocol (kafka_client.py), yielding Arrow record batches of at most
  ROWS_PER_BATCH rows, so a range never sits in memory whole. `minPartitions`
  splits large ranges across more tasks.
- readStream: offsets are Spark's per-partition JSON ({"topic":{"0":42}}),
  checkpointed by Spark; a restart continues from the checkpoint; partitions
  that appear later are read from their earliest offset; maxOffsetsPerTrigger
  caps a micro-batch, spread over partitions by their backlog.
- write / writeStream: rows with `value` (required), `key`, `topic` (or the
  `topic` option), `partition`, `headers`, handed to the task as Arrow batches
  (DataSourceArrowWriter: no Spark Row object per record) and sent by an
  idempotent librdkafka producer per task; the job commit logs the records
  written per partition.
- both connect to SASL and TLS listeners with Spark's `kafka.security.protocol`,
  `kafka.sasl.*` and `kafka.ssl.*` options (client_security).
- failOnDataLoss: a starting offset below a partition's log start (retention
  or DeleteRecords removed it) fails the query with the partition named, or,
  with failOnDataLoss=false, logs a warning and starts at the log start.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import time
from collections.abc import Iterator
from typing import Any, Final

import pyarrow as pa  # Spark's Python data sources need it: read() yields Arrow batches
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from franz.spark.columnar import HEADERS_ARROW_TYPE, Segment, decode
from franz.spark.kafka_client import EARLIEST, LATEST, KafkaClient, KafkaSourceError
from franz.spark.options import OptionError, SourceOptions, _Options, producer_settings

logger = logging.getLogger(__name__)

ROWS_PER_BATCH: Final = 8192
HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))
BASE_FIELDS = [StructField("key", BinaryType()), StructField("value", BinaryType()),
               StructField("topic", StringType()), StructField("partition", IntegerType()),
               StructField("offset", LongType()), StructField("timestamp", TimestampType()),
               StructField("timestampType", IntegerType())]


def source_schema(include_headers: bool) -> StructType:
    """Spark's Kafka source schema (headers only with includeHeaders=true)."""
    fields = list(BASE_FIELDS)
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


class KafkaInputPartition(InputPartition):
    """Offsets [start, end) of one topic-partition, read by one task."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic, self.partition, self.start, self.end = topic, partition, start, end

    def __repr__(self) -> str:
        return f"KafkaInputPartition({self.topic}-{self.partition} [{self.start}, {self.end}))"


# -- driver side: partitions and offsets ---------------------------------------------

def topic_partitions(client: KafkaClient, options: SourceOptions) -> list[tuple[str, int]]:
    if options.subscribe is not None:
        counts = client.partitions(options.subscribe)
    elif options.subscribe_pattern is not None:
        counts = {t: n for t, n in client.partitions(None).items() if options.subscribe_pattern.fullmatch(t)}
    else:
        counts = client.partitions(sorted(options.assign))
        for topic, wanted in options.assign.items():
            missing = [p for p in wanted if p >= counts[topic] or p < 0]
            if missing:
                raise KafkaSourceError(f"Option 'assign': topic {topic!r} has no partitions {missing}")
        return sorted((t, p) for t, parts in options.assign.items() for p in parts)
    return sorted((t, p) for t, n in counts.items() for p in range(n))


def _resolve(client: KafkaClient, partitions: list[tuple[str, int]], spec: str | dict, default: int,
             isolation: int) -> dict[tuple[str, int], int]:
    if not partitions:
        return {}
    earliest = client.list_offsets(partitions, EARLIEST)
    latest = client.list_offsets(partitions, LATEST, isolation)
    resolved = {}
    for tp in partitions:
        wanted = (EARLIEST if spec == "earliest" else LATEST) if isinstance(spec, str) else spec.get(tp, default)
        resolved[tp] = earliest[tp] if wanted == EARLIEST else latest[tp] if wanted == LATEST else wanted
    return resolved


def starting_offsets(client: KafkaClient, partitions: list[tuple[str, int]], options: SourceOptions,
                     default: int) -> dict[tuple[str, int], int]:
    """startingTimestamp, startingOffsetsByTimestamp or startingOffsets, in that order (Spark's
    getKafkaOffsetRangeLimit). No record at or after a partition's timestamp: an error, or with
    startingOffsetsByTimestampStrategy=latest the partition's end."""
    stamps = _timestamps(partitions, options.starting_timestamp, options.starting_by_timestamp)
    if stamps is None:
        return _resolve(client, partitions, options.starting, default, options.isolation_level)
    return _offsets_at(client, stamps, options.isolation_level, fail_unmatched=options.no_match_strategy == "error")


def ending_offsets(client: KafkaClient, partitions: list[tuple[str, int]],
                   options: SourceOptions) -> dict[tuple[str, int], int]:
    """endingTimestamp, endingOffsetsByTimestamp or endingOffsets: a timestamp no record
    reaches ends the partition at its end, as Spark's readTimestampOffsets does."""
    stamps = _timestamps(partitions, options.ending_timestamp, options.ending_by_timestamp)
    if stamps is None:
        return _resolve(client, partitions, options.ending, LATEST, options.isolation_level)
    return _offsets_at(client, stamps, options.isolation_level, fail_unmatched=False)


def _offsets_at(client: KafkaClient, stamps: dict[tuple[str, int], int], isolation: int,
                fail_unmatched: bool) -> dict[tuple[str, int], int]:
    """Each partition's first offset at or after its timestamp; where no record is that late,
    Spark's error (fail_unmatched) or the partition's end."""
    found = client.list_offsets(list(stamps), stamps, isolation)
    missing = [tp for tp, offset in found.items() if offset < 0]
    if missing and fail_unmatched:
        topic, partition = missing[0]
        raise KafkaSourceError(f"No offset matched from request of topic-partition {topic}-{partition} and "
                               f"timestamp {stamps[(topic, partition)]}.")
    latest = client.list_offsets(missing, LATEST, isolation) if missing else {}
    return {tp: latest.get(tp, offset) for tp, offset in found.items()}


def _timestamps(partitions: list[tuple[str, int]], every: int | None,
                by_partition: dict | None) -> dict[tuple[str, int], int] | None:
    """The timestamp to look up for each partition, None when no timestamp option is set. By
    partition, the option must name every partition read (Spark's fetchSpecificTimestampBasedOffsets)."""
    if every is not None:
        return {tp: every for tp in partitions}
    if by_partition is None:
        return None
    if set(by_partition) != set(partitions):
        raise KafkaSourceError("If starting/endingOffsetsByTimestamp contains specific offsets, you must specify "
                               f"all topics. Specified: {_names(by_partition)} Assigned: {_names(partitions)}")
    return dict(by_partition)


def _names(partitions) -> str:
    return "{" + ", ".join(f"{topic}-{partition}" for topic, partition in sorted(partitions)) + "}"


def check_data_loss(client: KafkaClient, starts: dict[tuple[str, int], int],
                    options: SourceOptions) -> dict[tuple[str, int], int]:
    """Starting offsets below the log start: fail, or skip to the log start with a warning."""
    if not starts:
        return starts
    earliest = client.list_offsets(list(starts), EARLIEST)
    adjusted = dict(starts)
    for tp, offset in starts.items():
        if offset < earliest[tp]:
            message = (f"Some data may have been lost: the starting offset {offset} of {tp[0]}-{tp[1]} is below "
                       f"its log start offset {earliest[tp]} (removed by retention or DeleteRecords).")
            if options.fail_on_data_loss:
                raise KafkaSourceError(message + " Set failOnDataLoss=false to skip the lost records.")
            logger.warning("%s Starting at %d because failOnDataLoss is false.", message, earliest[tp])
            adjusted[tp] = earliest[tp]
    return adjusted


def split_ranges(ranges: list[KafkaInputPartition], min_partitions: int | None) -> list[KafkaInputPartition]:
    """Spark's KafkaOffsetRangeCalculator.getRanges: with fewer ranges than min_partitions, each
    range is divided in proportion to its share of the records, ranges too small to divide kept
    whole and left out of the proportions; empty ranges are dropped."""
    ranges = [r for r in ranges if r.end > r.start]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.end - r.start for r in ranges)
    whole = {(r.topic, r.partition) for r in ranges if _part_count(r.end - r.start, total, min_partitions) == 1}
    divided_total = total - sum(r.end - r.start for r in ranges if (r.topic, r.partition) in whole)
    divided_min = max(min_partitions - len(whole), 1)
    split = []
    for r in ranges:
        parts = 1 if (r.topic, r.partition) in whole else _part_count(r.end - r.start, divided_total, divided_min)
        remaining, start = r.end - r.start, r.start
        for part in range(parts):  # getDividedPartition: the later parts take the remainder
            size = remaining // (parts - part)
            remaining -= size
            end = min(start + size, r.end)
            split.append(KafkaInputPartition(r.topic, r.partition, start, end))
            start = end
    return [r for r in split if r.end > r.start]


def _part_count(size: int, total: int, parts: int) -> int:
    return max(math.floor(size / total * parts + 0.5), 1)  # Java's Math.round


# -- task side: rows as Arrow --------------------------------------------------------

def read_partition(options: SourceOptions, partition: KafkaInputPartition) -> Iterator[Any]:
    """Arrow record batches of the partition's range: the data batches fetched are decoded a
    group at a time, a group being at least ROWS_PER_BATCH records (or what is left)."""
    include_headers = options.include_headers
    schema = _arrow_schema(include_headers)
    segments: list[Segment] = []
    rows = 0
    with _client(options) as client:
        for batch in client.read_batches(partition.topic, partition.partition, partition.start, partition.end,
                                         options.isolation_level):
            header = batch.header()
            timestamp_type = int(batch.timestamp_type)
            data, _ = batch.records_data()
            segments.append(Segment(data, header.record_count, header.base_offset, header.base_timestamp,
                                    header.max_timestamp if timestamp_type == 1 else None, timestamp_type))
            rows += header.record_count
            if rows >= ROWS_PER_BATCH:
                found = _batch(schema, decode(segments, partition.start, partition.end, include_headers), partition)
                segments, rows = [], 0
                if found.num_rows:
                    yield found
    if segments:
        found = _batch(schema, decode(segments, partition.start, partition.end, include_headers), partition)
        if found.num_rows:
            yield found


def _client(options: SourceOptions) -> KafkaClient:
    return KafkaClient(options.bootstrap_servers, security=options.security)


def _arrow_schema(include_headers: bool):
    fields = [pa.field("key", pa.binary()), pa.field("value", pa.binary()), pa.field("topic", pa.string()),
              pa.field("partition", pa.int32()), pa.field("offset", pa.int64()),
              pa.field("timestamp", pa.timestamp("us", tz="UTC")), pa.field("timestampType", pa.int32())]
    if include_headers:
        fields.append(pa.field("headers", HEADERS_ARROW_TYPE))
    return pa.schema(fields)


def _batch(schema, columns: dict[str, Any], partition: KafkaInputPartition):
    count = len(columns["offset"])
    columns["topic"] = pa.repeat(pa.scalar(partition.topic, pa.string()), count)
    columns["partition"] = pa.repeat(pa.scalar(partition.partition, pa.int32()), count)
    return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)


# -- batch ---------------------------------------------------------------------------

class FranzBatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        with _client(options) as client:
            partitions = topic_partitions(client, options)
            starts = check_data_loss(client, starting_offsets(client, partitions, options, EARLIEST), options)
            ends = ending_offsets(client, partitions, options)
        self.ranges = split_ranges([KafkaInputPartition(t, p, starts[(t, p)], ends[(t, p)])
                                    for t, p in partitions], options.min_partitions)

    def partitions(self) -> list[InputPartition]:
        return self.ranges or [KafkaInputPartition("", -1, 0, 0)]

    def read(self, partition: KafkaInputPartition) -> Iterator[Any]:
        if partition.end <= partition.start:
            return iter(())
        return read_partition(self.options, partition)


# -- streaming -----------------------------------------------------------------------

def _to_json(offsets: dict[tuple[str, int], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def _from_json(offsets: dict) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): int(o) for topic, parts in offsets.items() for p, o in parts.items()}


class FranzStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        # Trigger.AvailableNow: the partitions' ends when the query started, where it stops
        self.available_now_end: dict[tuple[str, int], int] | None = None
        self.last_trigger_ms = 0  # when a micro-batch last went ahead (minOffsetsPerTrigger)

    def prepareForTriggerAvailableNow(self) -> None:
        """KafkaMicroBatchStream's allDataForTriggerAvailableNow: what is there now is read,
        a micro-batch at a time within maxOffsetsPerTrigger; what comes later is not."""
        with _client(self.options) as client:
            partitions = topic_partitions(client, self.options)
            self.available_now_end = client.list_offsets(partitions, LATEST, self.options.isolation_level)

    def initialOffset(self) -> dict:
        with _client(self.options) as client:
            partitions = topic_partitions(client, self.options)
            starts = starting_offsets(client, partitions, self.options, LATEST)
            return _to_json(check_data_loss(client, starts, self.options))

    def getDefaultReadLimit(self) -> Any:
        cap = self.options.max_offsets_per_trigger
        return ReadMaxRows(cap) if cap is not None else ReadAllAvailable()

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        """The end of the next micro-batch: every partition's end, or, under a row limit
        (maxOffsetsPerTrigger), the limit spread over partitions by their backlog; with
        minOffsetsPerTrigger, `start` again (no batch) while fewer records wait and
        maxTriggerDelay has not passed since the last batch went ahead (KafkaMicroBatchStream's
        delayBatch). Python sources get no composite limit, so the minimum is taken from the
        options here, as Spark's Kafka source takes its ReadMinRows; never under AvailableNow."""
        cap = getattr(limit, "max_rows", None)
        with _client(self.options) as client:
            if self.available_now_end is not None:
                latest = self.available_now_end
            else:
                latest = client.list_offsets(topic_partitions(client, self.options), LATEST,
                                             self.options.isolation_level)
            if start is None:
                return _to_json(latest)
            begin = _from_json(start)
            minimum = self.options.min_offsets_per_trigger
            if minimum is not None and self.available_now_end is None and self._delay_batch(minimum, latest, begin):
                return start
            if cap is None:
                return _to_json(latest)
            partitions = sorted(latest)
            earliest = client.list_offsets(partitions, EARLIEST)
        begin = {tp: begin.get(tp, earliest[tp]) for tp in partitions}
        backlog = {tp: max(0, latest[tp] - begin[tp]) for tp in partitions}
        total = sum(backlog.values())
        if total <= cap:
            return _to_json(latest)
        return _to_json({tp: begin[tp] + min(backlog[tp], _prorated(cap, backlog[tp], total)) for tp in partitions})

    def _delay_batch(self, minimum: int, latest: dict[tuple[str, int], int],
                     current: dict[tuple[str, int], int]) -> bool:
        """KafkaMicroBatchStream.delayBatch: no batch while fewer than `minimum` records wait,
        unless maxTriggerDelay has passed since the last batch went ahead (the first always goes)."""
        now_ms = int(time.time() * 1000)
        if now_ms - self.last_trigger_ms >= self.options.max_trigger_delay_ms:
            self.last_trigger_ms = now_ms
            return False
        if sum(offset - current.get(tp, 0) for tp, offset in latest.items()) < minimum:
            return True
        self.last_trigger_ms = now_ms
        return False

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        begin, finish = _from_json(start), _from_json(end)
        new = [tp for tp in finish if tp not in begin]
        if new:
            with _client(self.options) as client:
                begin.update(client.list_offsets(new, EARLIEST))  # new partitions: from their start
        with _client(self.options) as client:
            begin = check_data_loss(client, {tp: begin[tp] for tp in finish}, self.options)
        ranges = [KafkaInputPartition(t, p, begin[(t, p)], o) for (t, p), o in sorted(finish.items())]
        return split_ranges(ranges, self.options.min_partitions)

    def read(self, partition: KafkaInputPartition) -> Iterator[Any]:
        return read_partition(self.options, partition)

    def commit(self, end: dict) -> None:
        pass  # Spark checkpoints the offsets; the broker keeps no state for this reader


def _prorated(cap: int, backlog: int, total: int) -> int:
    """KafkaMicroBatchStream.rateLimit: a partition's share of the cap by its backlog, rounded
    down, but up when below one record, so that no partition with a backlog starves."""
    share = cap * (backlog / total)
    return math.ceil(share) if share < 1 else math.floor(share)


# -- writing -------------------------------------------------------------------------

@dataclasses.dataclass
class WriteCounts(WriterCommitMessage):
    counts: dict[str, int]


def _check_write_schema(schema: StructType, options: dict) -> dict[str, str]:
    """The sink's checks before a job starts; its producer's settings (read on the driver)."""
    options = _Options(options)
    names = set(schema.fieldNames())
    if "value" not in names:
        raise OptionError("The franz sink needs a 'value' column (binary or string); the DataFrame has "
                          f"{sorted(names)}")
    if "topic" not in names and not options.get("topic"):
        raise OptionError("The franz sink needs a 'topic' column or the 'topic' option")
    if not options.get("kafka.bootstrap.servers"):
        raise OptionError("Option 'kafka.bootstrap.servers' must be specified for the franz sink")
    return producer_settings(options)


def _encode(value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return str(value).encode("utf-8")


def _bytes_column(batch: pa.RecordBatch, name: str) -> list[bytes | None]:
    """A key or value column as bytes: binary as is, text as UTF-8, anything else as its text."""
    column = batch.column(name)
    if not (pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type)):
        if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
            column = column.cast(pa.string())
        column = column.cast(pa.binary())  # same bytes, no copy per value
    return column.to_pylist()


def write_batches(options: dict, settings: dict[str, str], batches: Iterator[pa.RecordBatch]) -> WriteCounts:
    """Produce every row of the Arrow batches (columns key, value, topic, partition, headers)
    with an idempotent librdkafka producer, the Java producer's defaults under the query's own
    kafka.* `settings`; the acknowledged counts per topic-partition."""
    options = _Options(options)
    from confluent_kafka import Producer  # noqa: PLC0415 - executors import it when they write
    # murmur2_random: a keyed row lands where Kafka's Java producer (Spark's own Kafka sink) puts
    # it, murmur2(key) mod partitions; librdkafka's default (CRC32) would put it elsewhere.
    producer = Producer({"enable.idempotence": True, "linger.ms": 5, "partitioner": "murmur2_random",
                         "compression.type": "none", **settings,
                         "bootstrap.servers": options["kafka.bootstrap.servers"]})
    default_topic = options.get("topic")
    counts: dict[str, int] = {}
    failures: list[str] = []

    def delivered(error, message) -> None:
        if error is not None:
            failures.append(str(error))
        else:
            key = f"{message.topic()}-{message.partition()}"
            counts[key] = counts.get(key, 0) + 1

    produce, poll = producer.produce, producer.poll
    for batch in batches:
        names = set(batch.schema.names)
        values = _bytes_column(batch, "value")
        rows = len(values)
        keys = _bytes_column(batch, "key") if "key" in names else itertools.repeat(None, rows)
        topics = (itertools.repeat(default_topic, rows) if default_topic
                  else batch.column("topic").to_pylist())
        partitions = batch.column("partition").to_pylist() if "partition" in names else None
        headers = batch.column("headers").to_pylist() if "headers" in names else None
        for index, (value, key, topic) in enumerate(zip(values, keys, topics)):
            if not topic:
                raise OptionError("A row has no topic and the 'topic' option is not set")
            extra = {}
            if partitions is not None and partitions[index] is not None:
                extra["partition"] = int(partitions[index])
            if headers is not None and headers[index]:
                extra["headers"] = [(h["key"], _encode(h["value"])) for h in headers[index]]
            while True:
                try:
                    produce(topic, value=value, key=key, on_delivery=delivered, **extra)
                    break
                except BufferError:  # librdkafka's queue is full: let deliveries drain it
                    poll(0.1)
        poll(0)
    remaining = producer.flush(60)
    if failures or remaining:
        raise KafkaSourceError(f"{len(failures) + remaining} records were not acknowledged: "
                               f"{failures[:1] or ['timed out']}")
    return WriteCounts(counts)


def _log_counts(messages: list[WriteCounts]) -> dict[str, int]:
    total: dict[str, int] = {}
    for message in messages:
        for key, count in (message.counts if message else {}).items():
            total[key] = total.get(key, 0) + count
    logger.info("franz sink wrote %d records: %s", sum(total.values()), dict(sorted(total.items())))
    return total


class FranzBatchWriter(DataSourceArrowWriter):
    def __init__(self, options: dict, settings: dict[str, str]) -> None:
        self.options = options
        self.settings = settings
        self.counts: dict[str, int] = {}

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteCounts:
        return write_batches(self.options, self.settings, iterator)

    def commit(self, messages: list[WriteCounts]) -> None:
        self.counts = _log_counts(messages)


class FranzStreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: dict, settings: dict[str, str]) -> None:
        self.options = options
        self.settings = settings

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriteCounts:
        return write_batches(self.options, self.settings, iterator)

    def commit(self, messages: list[WriteCounts], batchId: int) -> None:
        _log_counts(messages)

    def abort(self, messages: list[WriteCounts], batchId: int) -> None:
        logger.warning("franz sink: micro-batch %d aborted after some records may have been written", batchId)


# -- the data source -----------------------------------------------------------------

class FranzDataSource(DataSource):
    """spark.read / readStream / write / writeStream .format("franz")."""

    @classmethod
    def name(cls) -> str:
        return "franz"

    def schema(self) -> StructType:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return source_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return FranzBatchReader(SourceOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return FranzStreamReader(SourceOptions.parse(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return FranzBatchWriter(dict(self.options), _check_write_schema(schema, dict(self.options)))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamArrowWriter:
        return FranzStreamWriter(dict(self.options), _check_write_schema(schema, dict(self.options)))
