"""Kafka message schemas, one module per area (see franz/protocol/schema.py)."""
