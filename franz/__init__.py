"""franz: a Kafka-compatible broker in Python.

Layers (each calls only the one below it):
cli/spark -> server/coordinator -> protocol/storage -> records.
"""

__version__ = "0.1.0"
