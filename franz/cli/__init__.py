"""The `franz` command: Kafka's tools under one command."""
