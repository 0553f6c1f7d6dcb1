"""The group coordinator: classic consumer groups and committed offsets in __consumer_offsets."""
