"""The Kafka wire protocol: message schemas, compiled codecs, API keys and error codes."""
