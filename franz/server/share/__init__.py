"""KIP-932 share groups on the broker: share-partitions, share sessions, ShareFetch and ShareAcknowledge."""
