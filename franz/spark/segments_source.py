"""`franz-segments`: read a log directory's segment files directly, no broker.

`spark.read.format("franz-segments").load(path)` takes a log dir (every
`<topic>-<partition>` folder in it), one partition folder, or one `.log`
file, and reads each segment in its own task, with the `franz` source's
schema (headers included) plus `segment` (the file's path). For archives,
backups and offline analysis of logs at rest. Records are read batch by batch
with franz.records (CRC-checked as the broker reads them); control batches
(transaction markers) are skipped, as a consumer skips them. A segment that
ends in a torn batch (a crashed writer) is read up to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StringType, StructField, StructType

from franz.spark.kafka_source import ROWS_PER_BATCH, source_schema
from franz.spark.options import OptionError
from franz.storage.files import parse_topic_partition_name


class SegmentPartition(InputPartition):
    def __init__(self, path: str, topic: str, partition: int) -> None:
        super().__init__((path, topic, partition))
        self.path, self.topic, self.partition = path, topic, partition


def segment_files(path: str) -> list[SegmentPartition]:
    root = Path(path)
    if not root.exists():
        raise OptionError(f"franz-segments: {path} does not exist")
    if root.is_file():
        logs = [root]
    elif any(child.suffix == ".log" for child in root.iterdir()):
        logs = sorted(root.glob("*.log"))
    else:
        logs = sorted(p for child in sorted(root.iterdir()) if child.is_dir() for p in child.glob("*.log"))
    partitions = []
    for log in logs:
        try:
            topic, partition = parse_topic_partition_name(log.parent.name)
        except ValueError:
            continue  # not a partition folder (e.g. a scratch dir beside the logs)
        partitions.append(SegmentPartition(str(log), topic, partition))
    return partitions


class SegmentsReader(DataSourceReader):
    def __init__(self, path: str) -> None:
        self.segments = segment_files(path)

    def partitions(self) -> list[InputPartition]:
        return self.segments or [SegmentPartition("", "", -1)]

    def read(self, partition: SegmentPartition) -> Iterator[Any]:
        if not partition.path:
            return
        import pyarrow as pa  # noqa: PLC0415
        from franz.records import FileRecords  # noqa: PLC0415
        from franz.records.errors import CorruptRecordError  # noqa: PLC0415
        names = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers", "segment"]
        types = [pa.binary(), pa.binary(), pa.string(), pa.int32(), pa.int64(), pa.timestamp("us", tz="UTC"),
                 pa.int32(), pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])),
                 pa.string()]
        schema = pa.schema([pa.field(n, t) for n, t in zip(names, types)])
        columns: dict[str, list] = {n: [] for n in names}
        records = FileRecords.open(partition.path, mutable=False)
        try:
            try:
                for batch in records.batches():
                    if batch.is_control_batch:
                        continue
                    timestamp_type = int(batch.timestamp_type)
                    for record in batch.records():
                        columns["key"].append(record.key)
                        columns["value"].append(record.value)
                        columns["offset"].append(record.offset)
                        columns["timestamp"].append(record.timestamp * 1000)
                        columns["timestampType"].append(timestamp_type)
                        columns["headers"].append([{"key": k if isinstance(k, str) else bytes(k).decode("utf-8"),
                                                    "value": v} for k, v in record.headers])
                    if len(columns["offset"]) >= ROWS_PER_BATCH:
                        yield _batch(pa, schema, columns, partition)
                        columns = {n: [] for n in names}
            except CorruptRecordError:
                pass  # a torn tail: everything before it has been read
        finally:
            records.close()
        if columns["offset"]:
            yield _batch(pa, schema, columns, partition)


def _batch(pa, schema, columns: dict[str, list], partition: SegmentPartition):
    count = len(columns["offset"])
    columns["topic"] = [partition.topic] * count
    columns["partition"] = [partition.partition] * count
    columns["segment"] = [os.path.basename(partition.path)] * count
    return pa.RecordBatch.from_arrays([pa.array(columns[f.name], type=f.type) for f in schema], schema=schema)


class FranzSegmentsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "franz-segments"

    def schema(self) -> StructType:
        return StructType(source_schema(True).fields + [StructField("segment", StringType())])

    def reader(self, schema: StructType) -> DataSourceReader:
        path = self.options.get("path")
        if not path:
            raise OptionError("franz-segments needs a path: spark.read.format('franz-segments').load(PATH)")
        return SegmentsReader(path)
