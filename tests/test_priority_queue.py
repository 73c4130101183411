"""A PriorityQueue the program builds and fills with its own QueueRunner, served by tf.data.

Legacy's order is deterministic where one enqueue puts every example in at once (its first
dequeue sees them all): there the two must agree exactly. Where its runner trickles
examples in, legacy's order depends on its thread; compat_input's is that of a queue kept
full (a buffer of `capacity`), checked against a heap written here, and the examples are
legacy's.
"""

import heapq

import numpy as np
import pytest
import tensorflow as tf

from helpers import assert_same
from helpers import differential

tf1 = tf.compat.v1
_PRIORITIES = [5, 3, 9, 0, 7, 1, 8, 2, 6, 4]


def _all_at_once(api, queue):
    """One enqueue_many of every example, run once (its producer has one item)."""
    tick = api.range_input_producer(1, num_epochs=1, shuffle=False).dequeue()
    priorities = tf.constant(_PRIORITIES, tf.int64) + tf.cast(tick, tf.int64)
    words = tf.strings.as_string(priorities * 10)
    api.add_queue_runner(api.QueueRunner(queue, [queue.enqueue_many([priorities, words])]))


def test_the_lowest_priority_leaves_first_as_legacy():
    def build(api):
        queue = api.PriorityQueue(16, [tf.string], shapes=[[]])
        _all_at_once(api, queue)
        return queue.dequeue()

    compat = assert_same(build)
    assert [p for p, _ in compat.values] == sorted(_PRIORITIES)
    assert [w for _, w in compat.values] == [str(10 * p).encode() for p in sorted(_PRIORITIES)]


@pytest.mark.parametrize("read", ["dequeue_many", "dequeue_up_to"])
def test_batches_of_a_priority_queue_end_as_legacy(read):
    def build(api):
        queue = api.PriorityQueue(16, [tf.string], shapes=[[]])
        _all_at_once(api, queue)
        return getattr(queue, read)(3)

    if read == "dequeue_many":
        compat = assert_same(build)
        assert [len(p) for p, _ in compat.values] == [3, 3, 3]
        return
    # Legacy's PriorityQueue kernel loses the final partial batch of a closed queue
    # ("insufficient elements (requested 2, current size 0)" after taking the last one);
    # compat_input gives it, as dequeue_up_to is documented to (and FIFOQueue's does).
    legacy, compat = differential(build)
    assert legacy.error is compat.error is tf.errors.OutOfRangeError
    assert compat.values[:3] == legacy.values
    assert [len(p) for p, _ in legacy.values] == [3, 3, 3]
    assert compat.values[3:] == [[[9], [b"90"]]]


def test_a_small_priority_queue_orders_what_it_holds_as_a_full_queue():
    priorities = np.random.default_rng(3).permutation(40).tolist()

    def build(api):
        index = api.range_input_producer(40, num_epochs=1, shuffle=False).dequeue()
        priority = tf.gather(tf.constant(priorities, tf.int64), index)
        queue = api.PriorityQueue(5, [tf.int32], shapes=[[]])
        api.add_queue_runner(api.QueueRunner(queue, [queue.enqueue([priority, index])]))
        return queue.dequeue()

    legacy, compat = differential(build)
    assert legacy.error is compat.error is tf.errors.OutOfRangeError
    assert sorted(map(tuple, compat.values)) == sorted(map(tuple, legacy.values))
    # A queue its runner kept full: 5 held, each arrival lets the lowest of 6 out.
    held, expected = [], []
    for index, priority in enumerate(priorities):
        if len(held) < 5:
            heapq.heappush(held, (priority, index))
        else:
            expected.append(heapq.heappushpop(held, (priority, index)))
    expected += sorted(held)
    assert [tuple(v) for v in compat.values] == expected


def test_a_named_priority_queue_is_left_to_tensorflow_and_said():
    from compat_input._src.batchers import legacy_fallback

    def build(api):
        queue = api.PriorityQueue(16, [tf.string], shapes=[[]], names=["priority", "word"])
        tick = api.range_input_producer(1, num_epochs=1, shuffle=False).dequeue()
        priorities = tf.constant(_PRIORITIES, tf.int64) + tf.cast(tick, tf.int64)
        words = tf.strings.as_string(priorities)
        enqueue = queue.enqueue_many({"priority": priorities, "word": words})
        api.add_queue_runner(api.QueueRunner(queue, [enqueue]))
        return queue.dequeue()

    before = len(legacy_fallback.kept)
    compat = assert_same(build)
    assert any("with names" in why for why in legacy_fallback.kept[before:])
    assert [v["priority"] for v in compat.values] == sorted(_PRIORITIES)
