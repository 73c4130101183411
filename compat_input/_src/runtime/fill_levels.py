"""How far an input runs ahead of the program: the examples made and not yet read, and how
long reads waited for theirs.

Legacy's queues answered the first with `size()`, and batchers and producers wrote it as a
`fraction_of_N_full` summary: a queue near empty on TensorBoard meant a model waiting for
its input. A pipeline has no queue to ask, so it counts, in one variable `counts` =
[examples made, examples taken, seconds waited]. A step after its batch step adds the
examples of each element it makes (one function for every pipeline of the graph with the
same element types), and each read adds what it took and how long it waited in the
iterator's read. Made minus taken is what legacy's queue held ready for its dequeue: the
batches made ahead, at most the capacity they share.

How long reads wait is timed two ways. By default a read has a clock that no step runs
but one that fetches it, its ops made when first fetched: `install()` fetches the clocks
of the reads a run runs anyway in one run every few milliseconds of run time
(input_waits.py), and each such run adds its reads' waits and examples to `samples`.
Clocks in every step (`clock`, on with `input_wait_summaries`, which read the waits in the
graph) cost five executor nodes a read, 3-4% of the tiny trainer's 0.2 ms step; sampled,
nothing measurable (benchmarks/results/fill-levels.md). `configure(input_waits=False)`
makes neither.

All are reset when the pipeline starts. After a restore the checkpoint's prefetched
batches were never counted as made: the level reads low by at most those until the
pipeline starts again (said in the migration guide).
"""

import dataclasses
import threading
import weakref
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.core.options import options
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import graph_states
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
        # [examples made, examples taken, seconds waited], one variable (each costs every
        # session an op and its initialization): float64 counts examples exactly to 2**53.
        self.counts = pipeline_lib.state_variable(initial(0.0, tf.float64, [3]), "counts")
        # Every read times its wait in the step (`clock`) where summaries show the waits;
        # else reads have clocks that only sampled runs fetch (`sample_clock`).
        self.timed = options.input_waits and options.input_wait_summaries
        self.sampled = options.input_waits and not self.timed
        self.clocks: list = []  # Of the sampled reads (`SampleClock`).
        self.samples = [0, 0.0, 0.0]  # Runs sampled, seconds waited, examples (input_waits).
        # Where waits are written as summaries: the seconds waited and the time when last
        # written.
        self.last_wait = None
        if self.timed:
            self.last_wait = pipeline_lib.state_variable(initial(0.0, tf.float64, [2]), "last")
        # The most examples the pipeline holds ready (its prefetched elements), set as it is
        # assembled: full here is full on legacy's scale, so a loop that waits for the
        # queue to fill ends as it ended on legacy.
        self.room = max(1, self.capacity - self.over)
        self._read = None
        graph = self.counts.handle.graph
        with _lock:
            levels.setdefault(graph, []).append(self)

    @property
    def made_read(self) -> Optional[tf.Tensor]:
        """`read()` if it was made (before a Supervisor finalized the graph), else None."""
        return self._read

    def read(self) -> tf.Tensor:
        """The counts, one op that summaries, `size()` and the waits report share; it
        initializes the input's state first where it is not yet (run before the input
        starts, it reads 0: legacy's queue was empty then)."""
        if self._read is None:
            graph = self.counts.handle.graph
            with tf_internals.at_root(graph):
                pipeline_lib.state_groups(graph)  # The state made so far, linked.
                with tf.control_dependencies([graph_states.graph_state(graph).chain]):
                    self._read = self.counts.read_value()
        return self._read

    def count_made(self, dataset: tf.data.Dataset, examples: bool) -> tf.data.Dataset:
        """`dataset`, adding each element's examples to `made` as it is made: one for an
        element that is one example, else its first component's length. One function for
        every pipeline of the graph with elements of the same types."""
        return tracing.shared_map(
            dataset, f"{COUNTING}_{int(examples)}", _counted(examples), [self.counts.handle]
        )

    def sample_clock(self, flat: list, size: tf.Tensor) -> None:
        """A clock for the read of `flat`, off the step's path: a run that fetches it (1 in
        many, input_waits.py) learns how long the read waited and how many examples it
        took; no other run runs it. A read in a cond or loop, or in a function, has none."""
        graph = flat[0].graph
        if graph.building_function or any(tf_internals.in_control_flow(t.op) for t in flat):
            return
        self.clocks.append(SampleClock(frozenset(t.op for t in flat), flat, size))

    def clock(self, guards: list) -> tuple:
        """A read's guards, then the time it begins (returned too; None where not every
        read is timed)."""
        if not self.timed:
            return guards, None
        # The read does not wait for its first reading (a root op of the step, which runs
        # while the started checks before the read do): in a plain tf.data graph, a reading
        # the read waited for cost 22 us a step, one it did not wait for nothing.
        return guards, tf.timestamp()

    def count_taken(self, element: Any, started: tf.Tensor, single: bool) -> list:
        """The op that adds a read's examples (one if `single`) to `taken`, and the time
        since `started` (before the read) to `waited`, once `element` is read."""
        flat = tf.nest.flatten(element, expand_composites=True)
        size = _ONE() if single else length(tf.nest.flatten(element)[0])
        if started is None:  # Untimed: one constant of the graph's where `size` is known.
            add = tf.stack([_ZERO(), size, _ZERO()])
        if self.sampled:
            self.sample_clock(flat, size)
        with tf.control_dependencies(flat):
            # (Made after the control dependencies, grappler folds a constant into one that
            # waits for the read too: one more node on its path, about 2 us a read.)
            if started is not None:
                add = tf.stack([_ZERO(), size, tf.timestamp() - started])
            return [graph_ops.AssignAddVariableOp(resource=self.counts.handle, value=add)]

    def fraction(self) -> tf.Tensor:
        """Legacy's summary value: the examples made and not yet read (beyond a shuffle's
        `over`, which its buffer holds), over what the pipeline holds at most."""
        return _share(self.read(), [1.0 / self.room, -1.0 / self.room, 0.0])

    def examples(self) -> tf.Tensor:
        """What a legacy queue of this input held now (int32): the examples made and not
        yet read, on legacy's scale; with a shuffle, its `min_after_dequeue` beyond them
        once it has made any (its buffer was full to make them)."""
        counts = self.read()
        beyond = tf.round(tf.cast(self.fraction(), tf.float64) * (self.capacity - self.over))
        kept = tf.where(counts[0] > 0, tf.constant(float(self.over), tf.float64), 0.0)
        return tf.cast(kept + beyond, tf.int32)

    def reset(self) -> list:
        return [self.counts.assign(self.counts.initial_value)]


# Shared by every pipeline's counting function: its name, and the constants of a read.
COUNTING = checkpoint.COUNTING_MAP


def _ZERO() -> tf.Tensor:  # noqa: N802 - a constant, made once per graph.
    return initial(0.0, tf.float64)


@dataclasses.dataclass(eq=False)
class SampleClock:
    """The clock of one read: `ops`, what the read runs; `flat`, what it reads; `size`, its
    examples (float64)."""

    ops: frozenset
    flat: list
    size: tf.Tensor
    _tensor: Optional[tf.Tensor] = None

    @property
    def tensor(self) -> tf.Tensor:
        """[seconds the read waited since its step began, examples], made when a sampled run
        first asks (a program run without install() makes none; a tower's build pays no
        op for it)."""
        with _making:
            if self._tensor is None:
                graph = self.flat[0].graph
                with tf_internals.at_root(graph):
                    began = _step_start(graph)
                    # After the read, by control edges added to the clock alone: a
                    # `tf.control_dependencies` marks the read's ops, which sessions ran
                    # already ("was changed by setting attribute after it was run by a
                    # session", on the program's stderr).
                    now = tf.timestamp()
                    for op in dict.fromkeys(t.op for t in self.flat):  # In order.
                        tf_internals.add_control_input(now.op, op)
                    self._tensor = tf.stack([now - began, self.size])
        return self._tensor


def _step_start(graph: tf.Graph) -> tf.Tensor:
    """The time a step of `graph` begins: one root clock that the sampled reads share."""
    with _lock:
        if graph not in _starts:
            _starts[graph] = tf.timestamp(name="compat_input_step_start")
        return _starts[graph]


_starts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_making = threading.Lock()  # Clocks made while the program runs, from any thread.


def _ONE() -> tf.Tensor:  # noqa: N802
    return initial(1.0, tf.float64)


def _counted(examples: bool):
    def count(element, handle):
        flat = tf.nest.flatten(element, expand_composites=True)
        first = tf.nest.flatten(element)[0]
        size = tf.constant(1.0, tf.float64) if examples else length(first, shared=False)
        zero = tf.constant(0.0, tf.float64)
        add = graph_ops.AssignAddVariableOp(resource=handle, value=tf.stack([size, zero, zero]))
        with tf.control_dependencies([add]):  # One output waits for the count.
            flat[0] = tf.identity(flat[0])
        return tf.nest.pack_sequence_as(element, flat, expand_composites=True)

    return count


def rows(tensor: tf.Tensor):
    """How many rows `tensor` has: an int where known when built, else a tensor."""
    known = tf.compat.dimension_value(tensor.shape[0]) if tensor.shape.rank else None
    return known if known is not None else tf.shape(tensor)[0]


def length(component, shared: bool = True, dtype: tf.DType = tf.float64) -> tf.Tensor:
    """How many examples `component` holds (`dtype`): its first dimension; a constant
    where known (`shared`: the graph's one, not inside a function)."""
    if isinstance(component, tf.SparseTensor):
        return tf.cast(component.dense_shape[0], dtype)
    count = rows(component)
    if not isinstance(count, int):
        return tf.cast(count, dtype)
    value = dtype.as_numpy_dtype(count)
    return initial(value, dtype) if shared else tf.constant(value, dtype)


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
    last = level.last_wait  # [seconds waited, time] when last evaluated.
    counts = level.read()
    with tf.control_dependencies([counts]):  # After the state is initialized.
        now, before = tf.timestamp(), last.read_value()
    waited = counts[2]
    elapsed = tf.maximum(now - before[1], 1e-6)
    value = tf.where(before[1] > 0, (waited - before[0]) / elapsed, 0.0)
    with tf.control_dependencies([value]):  # Read before it is written again.
        update = last.assign(tf.stack([waited, now]))
    with tf.control_dependencies([update]):
        return tf1.summary.scalar("input_wait_share", tf.cast(value, tf.float32))


def producer_fill(name: str, capacity: int, dataset, num_epochs, items) -> tuple:
    """A producer's `dataset`, counting the items its readers take, and its legacy
    queue's fill (float32): the items left, up to its capacity, over its capacity.
    Endless, it is always full: tf.data makes the next item as a reader asks."""
    if num_epochs is None:
        return dataset, initial(1.0, tf.float32)
    level = FillLevel(name, capacity)
    dataset = level.count_made(dataset, examples=True)
    if isinstance(items, int):
        total = tf.constant(num_epochs * items / capacity, tf.float64)
    else:
        total = tf.cast(num_epochs * items, tf.float64) / capacity
    return dataset, _share(level.read(), [-1.0 / capacity, 0.0, 0.0], total)


def _share(counts: tf.Tensor, weights: list, plus=None) -> tf.Tensor:
    """`counts` weighted and summed (`plus` added), kept within [0, 1], as float32: a few
    ops a summary, its constants the graph's."""
    # Raw ops: the operators' dispatch cost more than the ops (50 towers, 2 summaries each).
    weighted = graph_ops.Mul(x=counts, y=tf.constant(weights, tf.float64))
    value = graph_ops.Sum(input=weighted, axis=initial(0, tf.int32))
    if plus is not None:
        value = graph_ops.AddV2(x=value, y=plus)
    full = graph_ops.ClipByValue(
        t=value, clip_value_min=_ZERO(), clip_value_max=initial(1.0, tf.float64)
    )
    return graph_ops.Cast(x=full, DstT=tf.float32)


def write_producer_summary(name: str, fill: tf.Tensor) -> tf.Tensor:
    """Legacy's `summary_name` summary of a producer: what it holds over its capacity."""
    return tf1.summary.scalar(name, fill)


# The fill levels of each graph, for the waits report (input_waits.py).
levels: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
