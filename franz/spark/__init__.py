"""franz's PySpark data sources: `franz` (topics over the Kafka protocol) and `franz-segments` (log files).

Importing this package prepares the environment Spark's Python workers need
on this machine (workers run this interpreter; Spark stays on loopback unless
told otherwise); `register(spark)` adds both formats to a session and
`session()` builds a local one with them registered.
"""

from __future__ import annotations

import os
import sys

# Spark's Python workers must run the interpreter that has franz and pyarrow.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def register(spark) -> None:
    """Make .format("franz") and .format("franz-segments") known to `spark`."""
    from franz.spark.kafka_source import FranzDataSource  # noqa: PLC0415 - needs pyspark
    from franz.spark.segments_source import FranzSegmentsDataSource  # noqa: PLC0415
    spark.dataSource.register(FranzDataSource)
    spark.dataSource.register(FranzSegmentsDataSource)


def session(master: str = "local[2]", app_name: str = "franz", **conf: str):
    """A SparkSession with both formats registered (Arrow-friendly defaults for local runs)."""
    from pyspark.sql import SparkSession  # noqa: PLC0415
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in conf.items():
        builder = builder.config(key.replace("_", "."), value)
    spark = builder.getOrCreate()
    register(spark)
    return spark
