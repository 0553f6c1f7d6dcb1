"""The log storage engine: Apache Kafka 4.x's org.apache.kafka.storage.internals.log.

One module per Kafka class (see ../shared/DESIGN.md). The bytes on disk are the
ones Kafka writes, so a franz log directory can be read by Kafka's tools and
the other way round.
"""
