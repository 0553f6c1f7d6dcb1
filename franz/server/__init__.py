"""The broker: network reactor, request handlers (KafkaApis), ReplicaManager and
Partition, purgatory, fetch sessions, metadata cache and broker config."""
