"""JavaPriorityQueue against the order in which a JVM's java.util.PriorityQueue (OpenJDK 17) gives back
elements of equal priority."""

from __future__ import annotations

import heapq

from franz.common.java_priority_queue import JavaPriorityQueue


def test_equal_elements_come_back_as_from_java():
    # ids 0..5 with priorities 1,0,1,1,1,1 added one by one, then polled: the JVM gives 1,5,4,3,2,0
    queue = JavaPriorityQueue(key=lambda element: element[1], elements=enumerate([1, 0, 1, 1, 1, 1]))
    assert [queue.poll()[0] for _ in range(6)] == [1, 5, 4, 3, 2, 0]
    assert queue.poll() is None and len(queue) == 0


def test_heapq_would_not():
    # why the assignors cannot use heapq: its pop breaks the same ties differently
    class Entry:
        def __init__(self, ident: int, priority: int) -> None:
            self.ident, self.priority = ident, priority

        def __lt__(self, other: "Entry") -> bool:
            return self.priority < other.priority
    heap: list[Entry] = []
    for ident, priority in enumerate([1, 0, 1, 1, 1, 1]):
        heapq.heappush(heap, Entry(ident, priority))
    assert [heapq.heappop(heap).ident for _ in range(6)] != [1, 5, 4, 3, 2, 0]


def test_interleaved_adds_and_polls_keep_the_least_first():
    queue = JavaPriorityQueue(key=lambda element: element)
    for value in (5, 3, 8, 1):
        queue.add(value)
    assert queue.poll() == 1
    queue.add(0)
    queue.add(4)
    assert [queue.poll() for _ in range(5)] == [0, 3, 4, 5, 8]
