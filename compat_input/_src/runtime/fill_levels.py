"""How far an input runs ahead of the program: the examples made and not yet read, and how
long reads waited for theirs.

Legacy's queues answered the first with `size()`, and batchers and producers wrote it as a
`fraction_of_N_full` summary: a queue near empty on TensorBoard meant a model waiting for
its input. A pipeline has no queue to ask, so it counts. A step after its batch step adds
the examples of each element it makes (`made`), and each read adds what it took (`taken`)
and how long it waited in the iterator's read (`waited`, seconds). Made minus taken is what
legacy's queue held ready for its dequeue: the batches made ahead, at most the capacity
they share. A read pays five small ops for this (two clock reads, a subtraction, two
additions; a batch size known at build is a constant), about 4 us, and one without the
clock (`configure(input_waits=False)`); the pipeline pays one function call a batch:
benchmarks/results/fill-levels.md.

All are reset when the pipeline starts. After a restore the checkpoint's prefetched
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


@dataclasses.dataclass(eq=False)
class FillLevel:
    """The counts of one pipeline. `capacity`: what its legacy queue could hold; `over`: a
    shuffle's `min_after_dequeue`, which legacy's queue held beyond what it could give."""

    name: str
    capacity: int
    over: int = 0

    def __post_init__(self):
        self.made = pipeline_lib.state_variable(initial(0, tf.int64), "made")
        self.taken = pipeline_lib.state_variable(initial(0, tf.int64), "taken")
        self.waited = pipeline_lib.state_variable(initial(0.0, tf.float64), "waited")
        # Where waits are written as summaries: the seconds waited and the time when last
        # written.
        self.last_wait = None
        self.timed = options.input_waits  # Reads time their waits (`clock`).
        if options.input_wait_summaries and self.timed:
            self.last_wait = pipeline_lib.state_variable(initial(0.0, tf.float64, [2]), "last")
        # The most examples the pipeline holds ready (its prefetched elements), set as it is
        # assembled: full here is full on legacy's scale, so a loop that waits for the
        # queue to fill ends as it ended on legacy.
        self.room = max(1, self.capacity - self.over)
        # Made now: read when a session closes (input_waits.py), maybe after a Supervisor
        # has finalized the graph.
        self.counts = (self.taken.value(), self.waited.value())
        graph = self.made.handle.graph
        with _lock:
            levels.setdefault(graph, []).append(self)

    def count_made(self, dataset: tf.data.Dataset, examples: bool) -> tf.data.Dataset:
        """`dataset`, adding each element's examples to `made` as it is made: one for an
        element that is one example, else its first component's length."""
        handle = self.made.handle

        def made(*element):
            size = tf.constant(1, tf.int64) if examples else _length(tf.nest.flatten(element)[0])
            add = graph_ops.AssignAddVariableOp(resource=handle, value=size)
            flat = tf.nest.flatten(element, expand_composites=True)
            with tf.control_dependencies([add]):  # One output waits for the count.
                flat[0] = tf.identity(flat[0])
            out = tf.nest.pack_sequence_as(element, flat, expand_composites=True)
            return out[0] if len(out) == 1 else out

        return dataset.map(made, name=checkpoint.COUNTING_MAP)

    def clock(self, guards: list) -> tuple:
        """A read's guards, then the time it begins (returned too; None untimed)."""
        if not self.timed:
            return guards, None
        with tf.control_dependencies(guards):
            started = tf.timestamp()
        return [*guards, started.op], started

    def count_taken(self, element: Any, started: tf.Tensor, single: bool) -> list:
        """The ops that add a read's examples (one if `single`) to `taken` and the time
        since `started` (before the read) to `waited`, once `element` is read."""
        size = tf.constant(1, tf.int64) if single else _length(tf.nest.flatten(element)[0])
        taken = [graph_ops.AssignAddVariableOp(resource=self.taken.handle, value=size)]
        if started is None:
            return taken
        with tf.control_dependencies(tf.nest.flatten(element, expand_composites=True)):
            waited = tf.timestamp() - started
        return [*taken, graph_ops.AssignAddVariableOp(resource=self.waited.handle, value=waited)]

    def _ready(self) -> tuple:
        def counted():
            made = self.made.read_value()
            return made, tf.clip_by_value(made - self.taken.read_value(), 0, self.room)

        # Before the input starts (its state not yet initialized), legacy's queue was empty.
        zero = tf.constant(0, tf.int64)
        return tf.cond(self.taken.is_initialized(), counted, lambda: (zero, zero))

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
        return [v.assign(v.initial_value) for v in (self.made, self.taken, self.waited)]


def _length(component):
    """How many examples `component` holds: its first dimension (an int where known)."""
    if isinstance(component, tf.SparseTensor):
        return component.dense_shape[0]
    known = tf.compat.dimension_value(component.shape[0]) if component.shape.rank else None
    if known is not None:
        return tf.constant(known, tf.int64)
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
        now = tf.timestamp()
        waited, before = level.waited.read_value(), last.read_value()
        elapsed = tf.maximum(now - before[1], 1e-6)
        value = tf.where(before[1] > 0, (waited - before[0]) / elapsed, 0.0)
        with tf.control_dependencies([value]):  # Read before it is written again.
            update = last.assign(tf.stack([waited, now]))
        with tf.control_dependencies([update]):
            return tf.cast(value, tf.float32)

    started = level.waited.is_initialized() & last.is_initialized()
    return tf1.summary.scalar("input_wait_share", tf.cond(started, share, lambda: 0.0))


def producer_fill(name: str, capacity: int, dataset, num_epochs, items) -> tuple:
    """A producer's `dataset`, counting the items its readers take, and what its legacy
    queue held (int32): the items left, up to its capacity. Endless, it is always full:
    tf.data makes the next item as a reader asks."""
    if num_epochs is None:
        return dataset, tf.constant(capacity, tf.int32)
    level = FillLevel(name, capacity)
    dataset = level.count_made(dataset, examples=True)
    total = tf.cast(num_epochs, tf.int64) * tf.cast(items, tf.int64)
    left = tf.clip_by_value(total - level.made.read_value(), 0, capacity)
    # Before the input starts, nothing was taken yet.
    left = tf.cond(level.made.is_initialized(), lambda: left, lambda: tf.minimum(total, capacity))
    return dataset, tf.cast(left, tf.int32)


def write_producer_summary(name: str, held: tf.Tensor, capacity: int) -> tf.Tensor:
    """Legacy's `summary_name` summary of a producer: what it holds over its capacity."""
    return tf1.summary.scalar(name, tf.cast(held, tf.float32) * (1.0 / capacity))


# The fill levels of each graph, for the waits report (input_waits.py).
levels: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
