"""java.util.PriorityQueue with a comparator, for code whose outcome depends on which of equal elements
the queue gives back first.

heapq orders equal elements differently: its pop sifts the last element down to a leaf and back up,
preferring the right child on ties, where Java's poll stops at the first child that is not smaller and
prefers the left. Kafka's assignors break load ties by exactly this, so they need Java's heap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class JavaPriorityQueue(Generic[T]):
    """A binary min-heap over `key(element)`, sifting as PriorityQueue.siftUp/siftDown do. Keys are read
    at every comparison, as Java's comparator is, so an element must not change its key while queued."""

    def __init__(self, key: Callable[[T], Any], elements: Iterable[T] = ()) -> None:
        self._key = key
        self._heap: list[T] = []
        for element in elements:  # PriorityQueue.addAll: one add at a time
            self.add(element)

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, element: T) -> None:
        heap, key = self._heap, self._key
        heap.append(element)
        index = len(heap) - 1
        element_key = key(element)
        while index > 0:
            parent = (index - 1) >> 1
            if not element_key < key(heap[parent]):
                break
            heap[index] = heap[parent]
            index = parent
        heap[index] = element

    def poll(self) -> T | None:
        """The least element, removed; None when empty."""
        heap, key = self._heap, self._key
        if not heap:
            return None
        result = heap[0]
        last = heap.pop()
        size = len(heap)
        if size:
            index, half, last_key = 0, size >> 1, key(last)
            while index < half:
                child = 2 * index + 1
                right = child + 1
                if right < size and key(heap[child]) > key(heap[right]):
                    child = right
                if last_key <= key(heap[child]):
                    break
                heap[index] = heap[child]
                index = child
            heap[index] = last
        return result
