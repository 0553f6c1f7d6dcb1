"""The share coordinator (KIP-932): the state of every share-partition in `__share_group_state`."""
