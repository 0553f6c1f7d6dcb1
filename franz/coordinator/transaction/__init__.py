"""The transaction coordinator (kafka.coordinator.transaction)."""
