"""An end-to-end pipeline on franz and Spark: ingest, streaming aggregation to Parquet, batch read back.

    .venv/bin/franz server start &                  # a broker on 127.0.0.1:9092
    .venv/bin/python examples/spark_pipeline.py --bootstrap 127.0.0.1:9092 --work /tmp/franz-pipeline

1. Ingest: a dataset of page views built in Spark is written to the topic
   `page-views` with df.write.format("franz") (key = user, value = JSON).
2. Stream: spark.readStream.format("franz") reads the topic, parses the JSON,
   counts views per page and writes the counts to Parquet with a checkpoint
   (availableNow: everything there is, then stop; run it again and it goes on
   from the checkpoint).
3. Read back: the Parquet table, as a batch DataFrame.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import franz.spark

TOPIC = "page-views"
PAGES = ("/", "/docs", "/pricing", "/blog")


def ingest(spark, bootstrap: str, views: int) -> None:
    rows = [(f"user-{i % 37}", json.dumps({"page": PAGES[i % len(PAGES)], "ms": 20 + i % 300})) for i in range(views)]
    frame = spark.createDataFrame(rows, "key string, value string")
    frame.write.mode("append").format("franz").option("kafka.bootstrap.servers", bootstrap) \
        .option("topic", TOPIC).save()


def aggregate(spark, bootstrap: str, work: Path) -> None:
    views = (spark.readStream.format("franz").option("kafka.bootstrap.servers", bootstrap)
             .option("subscribe", TOPIC).option("startingOffsets", "earliest").load()
             .selectExpr("CAST(value AS STRING) AS json", "offset", "partition")
             .selectExpr("get_json_object(json, '$.page') AS page", "offset", "partition"))
    query = (views.writeStream.format("parquet")
             .option("path", str(work / "views")).option("checkpointLocation", str(work / "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination()


def read_back(spark, work: Path) -> dict[str, int]:
    counts = spark.read.parquet(str(work / "views")).groupBy("page").count().collect()
    return {row.page: row["count"] for row in counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--work", default="/tmp/franz-pipeline")
    parser.add_argument("--views", type=int, default=10_000)
    args = parser.parse_args()
    work = Path(args.work)
    spark = franz.spark.session(app_name="franz-pipeline")
    try:
        ingest(spark, args.bootstrap, args.views)
        aggregate(spark, args.bootstrap, work)
        print(json.dumps(read_back(spark, work), sort_keys=True))
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
