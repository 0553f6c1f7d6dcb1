"""Pieces every layer may use: config definitions (Kafka's common.config)."""
