"""How far an input runs ahead of the program: the examples made and not yet read, and how
long reads waited for theirs.

Legacy's queues answered the first with `size()`, and batchers and producers wrote it as a
`fraction_of_N_full` summary: a queue near empty on TensorBoard meant a model waiting for
its input. A pipeline has no queue to ask, so it counts. A step after its batch step adds
the examples of each element it makes (`made`), and each read adds what it took and how
long it waited in the iterator's read (`reads`: examples, microseconds, reads, in one
variable and one op). Made minus taken is what legacy's queue held ready for its dequeue:
the batches made ahead and the one being handed over, at most the capacity they share.

Both are reset when the pipeline starts. After a restore the checkpoint's prefetched
batches were never counted as made: the level reads low by at most those until the
pipeline starts again (said in the migration guide).
"""

import dataclasses
import threading
import weakref
from typing import Any

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core.options import options
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1

_MICROSECONDS = 1e6


@dataclasses.dataclass(eq=False)
class FillLevel:
    """The counts of one pipeline. `capacity`: what its legacy queue could hold; `over`: a
    shuffle's `min_after_dequeue`, which legacy's queue held beyond what it could give."""

    name: str
    capacity: int
    over: int = 0

    def __post_init__(self):
        self.made = pipeline_lib.state_variable(initial(0, tf.int64), "made")
        self.reads = pipeline_lib.state_variable(initial(0, tf.int64, [3]), "reads")
        # Where waits are written as summaries: the waits and time when last written.
        self.last_wait = None
        if options.input_wait_summaries:
            self.last_wait = pipeline_lib.state_variable(initial(0, tf.int64, [2]), "last_wait")
        # The most examples the pipeline holds ready (its prefetched elements), set as it is
        # assembled: full here is full on legacy's scale, so a loop that waits for the
        # queue to fill ends as it ended on legacy.
        self.room = max(1, self.capacity - self.over)
        self.reads.value()  # Made now: read when a session closes (input_waits.py), maybe
        # after a Supervisor has finalized the graph.
        graph = self.made.handle.graph
        with _lock:
            levels.setdefault(graph, []).append(self)

    def count_made(self, dataset: tf.data.Dataset, examples: bool) -> tf.data.Dataset:
        """`dataset`, adding each element's examples to `made` as it is made: one for an
        element that is one example, else its first component's length."""
        handle = self.made.handle

        def made(*element):
            size = 1 if examples else _length(element[0])
            add = graph_ops.AssignAddVariableOp(resource=handle, value=tf.cast(size, tf.int64))
            with tf.control_dependencies([add]):
                out = tuple(tf.identity(x) if isinstance(x, tf.Tensor) else x for x in element)
            return out[0] if len(out) == 1 else out

        return dataset.map(made, name=checkpoint.COUNTING_MAP)

    def clock(self, guards: list) -> tuple:
        """A read's guards, then the time it begins (returned too)."""
        with tf.control_dependencies(guards):
            started = tf.timestamp()
        return [*guards, started.op], started

    def count_taken(self, element: Any, started: tf.Tensor, single: bool) -> tf.Operation:
        """The op that adds a read's examples (one if `single`), the time since `started`
        (before the read), and one read to `reads`, once `element` is read."""
        flat = tf.nest.flatten(element, expand_composites=True)
        size = 1 if single else _length(tf.nest.flatten(element)[0])
        with tf.control_dependencies(flat):
            waited = (tf.timestamp() - started) * _MICROSECONDS
        add = tf.stack(
            [tf.cast(size, tf.int64), tf.cast(waited, tf.int64), tf.constant(1, tf.int64)]
        )
        return graph_ops.AssignAddVariableOp(resource=self.reads.handle, value=add)

    def _ready(self) -> tuple:
        def counted():
            made = self.made.read_value()
            return made, tf.clip_by_value(made - self.reads.read_value()[0], 0, self.room)

        # Before the input starts (its state not yet initialized), legacy's queue was empty.
        zero = tf.constant(0, tf.int64)
        return tf.cond(self.reads.is_initialized(), counted, lambda: (zero, zero))

    def examples(self) -> tf.Tensor:
        """What a legacy queue of this input held now (int32): the examples made and not
        yet read, on legacy's scale; with a shuffle, its `min_after_dequeue` beyond them
        once it has made any (its buffer was full to make them)."""
        made, ready = self._ready()
        beyond = ready * (self.capacity - self.over) // self.room
        kept = tf.where(made > 0, tf.constant(self.over, tf.int64), 0)
        return tf.cast(kept + beyond, tf.int32)

    def fraction(self) -> tf.Tensor:
        """Legacy's summary value: the examples ready beyond `over`, as a fraction of the
        capacity beyond it."""
        return tf.cast(self._ready()[1], tf.float32) * (1.0 / self.room)

    def reset(self) -> list:
        return [v.assign(v.initial_value) for v in (self.made, self.reads)]


def _length(component) -> tf.Tensor:
    if isinstance(component, tf.SparseTensor):
        return component.dense_shape[0]
    return tf.shape(component, out_type=tf.int64)[0]


def write_summary(level: FillLevel) -> tf.Tensor:
    """Legacy's summary of the batcher whose name scope is open, in SUMMARIES:
    `fraction_of_N_full`, or `fraction_over_M_of_N_full` for a shuffle keeping M."""
    capacity, over = level.capacity, level.over
    name = (
        f"fraction_over_{over}_of_{capacity - over}_full"
        if over
        else f"fraction_of_{capacity}_full"
    )
    return tf1.summary.scalar(name, level.fraction())


def write_wait_summary(level: FillLevel) -> tf.Tensor:
    """`input_wait_share` of the batcher whose name scope is open, in SUMMARIES: the share
    of the time since the summary was last evaluated (every N steps, as the program runs
    its summaries) that reads of the input waited for it."""
    last = level.last_wait  # [microseconds waited, time] when last evaluated.

    def share():
        now = tf.cast(tf.timestamp() * _MICROSECONDS, tf.int64)
        waited, before = level.reads.read_value()[1], last.read_value()
        elapsed = tf.cast(tf.maximum(now - before[1], 1), tf.float32)
        value = tf.where(before[1] > 0, tf.cast(waited - before[0], tf.float32) / elapsed, 0.0)
        with tf.control_dependencies([value]):  # Read before it is written again.
            update = last.assign(tf.stack([waited, now]))
        with tf.control_dependencies([update]):
            return tf.identity(value)

    started = level.reads.is_initialized() & last.is_initialized()
    return tf1.summary.scalar("input_wait_share", tf.cond(started, share, lambda: 0.0))


def producer_fraction(name: str, capacity: int, dataset, num_epochs, items) -> tuple:
    """A producer's `dataset`, counting the items its readers take, and its summary's
    value: the items left, up to its capacity, over its capacity, as its legacy queue
    held them. Endless, it is always full: tf.data makes the next item as a reader asks."""
    if num_epochs is None:
        return dataset, tf.constant(1.0)
    level = FillLevel(name, capacity)
    dataset = level.count_made(dataset, examples=True)
    total = tf.cast(num_epochs, tf.int64) * tf.cast(items, tf.int64)
    left = tf.clip_by_value(total - level.made.read_value(), 0, capacity)
    return dataset, tf.cast(left, tf.float32) * (1.0 / capacity)


# The fill levels of each graph, for the waits report (input_waits.py).
levels: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
