"""Queues the program builds (`FIFOQueue`, `RandomShuffleQueue`, `PaddingFIFOQueue`), served
by tf.data where their producers are the program's own QueueRunners.

Research code builds its queue, fills it with enqueue ops run by a `QueueRunner`, and takes
examples or batches out (resnet's `cifar_input`, inception's `batch_inputs`, im2txt's
`prefetch_input_data`, tf_slim's `prefetch_queue`). Such a queue is a batcher written by
hand: its runner's enqueue ops are the per-example graphs (one op run by N threads, or one
op per thread), its dequeue the batch. So the first dequeue makes one batch plan of it
(batch_plan.py) and the queue's reads come from a tf.data pipeline: the enqueue ops'
graphs captured (vectorized where provable), joined as batch_join joins its lists,
`enqueue_many` unbatched, a RandomShuffleQueue's capacity and `min_after_dequeue` a shuffle
with the seed the queue drew, a PaddingFIFOQueue's `dequeue_many` a padded batch.

The queue itself is still made, as legacy made it (enqueue ops need its handle, and the
seed is drawn where legacy drew it), and nothing runs it. Its runner (runners.QueueRunner)
starts no threads. A queue whose first dequeue finds no runner of ours to feed it is served
when one is made (early_reads.py); until then, and for good where none comes (fed from
Python, a token queue), it is left to TensorFlow and named in `legacy_fallback.kept`,
which `compat-input run` reports at exit.
"""

from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.batchers import batch_plan
from compat_input._src.batchers import early_reads
from compat_input._src.batchers import legacy_arguments
from compat_input._src.batchers import legacy_fallback
from compat_input._src.batchers import plan_steps
from compat_input._src.batchers.structures import Structure
from compat_input._src.core import devices
from compat_input._src.core import errors
from compat_input._src.core import graph_ops
from compat_input._src.core import state_variables
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import runners

tf1 = tf.compat.v1

_ENQUEUES = {"QueueEnqueueV2": False, "QueueEnqueueManyV2": True}  # op type: enqueue_many
# A read's count that each run computes, in a queue's served kind.
_PER_RUN = "a count computed at run time"
_NO_RUNNER = "no QueueRunner of ours fed it"


def _runners_of(queue) -> list:
    # Ours wherever they are; TensorFlow's where a collection holds them (to say why the
    # queue stays theirs).
    found = [r for r in list(runners.made) if getattr(r, "queue", None) is queue]
    graph = queue.queue_ref.graph
    for key in graph.get_all_collection_keys():
        for item in graph.get_collection(key):
            theirs = not isinstance(item, runners.QueueRunner)  # Ours are all in `made`.
            if theirs and isinstance(item, tf1.train.QueueRunner) and item.queue is queue:
                found.append(item)
    return found


def _leave_collections(runs: list) -> None:
    # The graph's pipeline runner starts the queue's pipeline now. Left in, these runners
    # would be exported (`export_meta_graph` calls TensorFlow's own `QueueRunner.to_proto`,
    # whatever the class), and imported their threads would run the enqueue ops, taking
    # from the producer examples that the served pipeline then never sees.
    graph = runs[0].queue.queue_ref.graph
    for key in graph.get_all_collection_keys():
        items = graph.get_collection_ref(key)
        items[:] = [item for item in items if not any(item is r for r in runs)]


def _why_not_served(queue, what: str, runs: list) -> Optional[str]:
    """Why the program's queue cannot be served, or None."""
    if tf.executing_eagerly():
        return "eager execution"
    if queue._served_kind is not None:
        return None
    shared = queue.queue_ref.op.get_attr("shared_name").decode()
    if shared:
        return f"shared_name {shared!r} shares it between sessions"
    if not runs:
        return (
            f"{_NO_RUNNER} when its first {what} was made (fed from Python, or used as a "
            "token queue)"
        )
    theirs = [r for r in runs if not isinstance(r, runners.QueueRunner)]
    if theirs:
        return (
            "its QueueRunner is TensorFlow's class, made before install() (import it through "
            "tf.compat.v1.train, or call compat_input.install() first)"
        )
    ops = [op for r in runs for op in r.enqueue_ops]
    for op in ops:
        if op.type not in _ENQUEUES or op.inputs[0] is not queue.queue_ref:
            return f"its runner runs {op.type} op '{op.name}', not an enqueue into it"
    if len({_ENQUEUES[op.type] for op in ops}) > 1:
        return "its runners mix enqueue and enqueue_many"
    return None


def _common_shape(tensors: list, enqueue_many: bool) -> tf.TensorShape:
    """The most specific shape every one of `tensors` (one per enqueue op) has per example."""
    shapes = [t.shape[1:] if enqueue_many and t.shape.rank else t.shape for t in tensors]
    common = shapes[0]
    for shape in shapes[1:]:
        common = common.most_specific_compatible_shape(shape)
    return common


class _Served:
    """What the served queue kinds share: reads from a tf.data pipeline once served."""

    _dynamic_pad = False
    _priority = False  # A PriorityQueue: its first component orders what it holds.
    _tf_init = None  # TensorFlow's class's __init__, as `unpatched_init` gives it.

    def __init__(self, *args, **kwargs):
        self._tf_init(*args, **kwargs)
        self._served_kind = None  # ("dequeue" | "dequeue_many" | "dequeue_up_to", n)
        self._served = None  # (its batch plan, its pipeline's source)
        # Its "closed" flag once asked for (a runner's close ops are made with it): set
        # by `close()`, read by `is_closed()` and by the pipeline, which then takes no more.
        self._closed = None
        # Sizes made before the queue was served: made to report its capacity once it is.
        self._early_sizes: list = []
        # Reads made before any runner of ours fed it, and the line that said so: served
        # if one comes (early_reads.py).
        self._early_reads: list = []
        self._awaiting: Optional[str] = None

    def _shuffle(self) -> Optional[batch_plan.Shuffle]:
        return None

    @devices.made_on_host
    @tracing.without_autograph
    def _serve(self, what: str, n, name: Optional[str]) -> Optional[Any]:
        """The dequeue `what(n)` read from the queue's pipeline, or None: left to TensorFlow."""
        runs = _runners_of(self)
        why = _why_not_served(self, what, runs)
        static_n = None if n is None else tf.get_static_value(n)
        defined = (
            (lambda s: s.rank is not None)
            if self._dynamic_pad
            else (lambda s: s.is_fully_defined())
        )
        if why is None and n is not None and not all(defined(s) for s in self.shapes):
            # Legacy fails as it runs (DequeueMany requires the components to have specified
            # shapes); left to it, the program gets that error.
            why = f"{what} from a queue made without shapes"
        if n is None:
            kind = (what, None)
        elif static_n is None:  # Computed each run (a fed placeholder): each read its own.
            kind = (what, _PER_RUN)
        else:
            kind = (what, int(static_n))
        if why is not None:
            line = f"{type(self).__name__} '{self.name}': {why}"
            # A runner made after this read serves the queue then (early_reads.py); said
            # once, however many reads come before it.
            awaiting = not runs and why.startswith(_NO_RUNNER)
            if not (awaiting and self._awaiting):
                legacy_fallback.keep(line, warn=not awaiting)
            self._awaiting = (self._awaiting or line) if awaiting else None
            return None
        if self._served_kind is not None:
            if kind != self._served_kind:
                with tf1.name_scope(name, self._read_name(what)) as scope:
                    return self._read_another_way(scope, what, n, static_n)
            with tf1.name_scope(name, self._read_name(what)) as scope:
                return self._static(what, static_n, self._read(scope, n))
        try:
            plan = self._plan(kind, n, runs, name)
        except (ValueError, TypeError, errors.CaptureError) as error:
            # Legacy built this queue and its runner; it stays theirs, and works as before.
            legacy_fallback.keep(f"{type(self).__name__} '{self.name}': {error}")
            return None
        self._served_kind = kind
        plan.closed = self._closed_flag().handle
        self._served = (plan, batch_plan.build(plan))
        plan.fill.read()  # Made now, for size() and the waits report (fill_levels.py).
        _leave_collections(runs)
        for size in self._early_sizes:
            with tf_internals.at_root(size.graph):
                tf_internals.rewire_input(size, 0, plan.fill.examples())
        return self._static(what, static_n, self._read(None, n))

    def _read_another_way(self, scope: str, what: str, n, static_n) -> Any:
        """A read unlike the first (`dequeue()` after `dequeue_many(n)`, another count),
        stacked from the pipeline's blocks or examples (counted_reads.py)."""
        count = self._served_kind[1]
        batch = batch_plan.read(
            *self._served,
            name=scope,
            count=1 if n is None else n,
            allow_smaller=what == "dequeue_up_to",
            blocks=count is not None,
        )
        flat = tf.nest.flatten(batch)
        if n is None:  # One example, of the queue's own static shapes.
            flat = [tf.ensure_shape(t[0], s) for t, s in zip(flat, self.shapes)]
        return self._static(what, static_n, tf.nest.pack_sequence_as(batch, flat))

    @staticmethod
    def _static(what: str, static_n, batch) -> Any:
        if what == "dequeue_many" and static_n is not None:  # Legacy's static size.
            for t in tf.nest.flatten(batch):
                t.set_shape(tf.TensorShape([int(static_n)]).concatenate(t.shape[1:]))
        return batch

    @staticmethod
    def _counted(plan) -> bool:
        return isinstance(plan.size, legacy_arguments.PerRun)

    def _read(self, name: Optional[str], n) -> Any:
        plan = self._served[0]
        relaxed = list(self.shapes) if self._served_kind[1] is None else None
        count = n if self._counted(plan) else None
        return batch_plan.read(*self._served, name=name, shapes=relaxed, count=count)

    def _plan(self, kind, n, runs: list, name: Optional[str]) -> batch_plan.BatchPlan:
        what, count = kind
        if count is not None:
            # Blocks of the first read's count, which each read of the queue takes as many
            # examples from as it asks for: read in other ways too (`dequeue()` here,
            # `dequeue_many(m)` there), it gives examples in legacy's order (a padding
            # queue's padded as legacy padded them, counted_reads.py).
            n = legacy_arguments.PerRun(
                n if count is _PER_RUN else tf.constant(count, tf.int32, name="count")
            )
        ops = [op for r in runs for op in r.enqueue_ops]
        distinct = list({op.name: op for op in ops}.values())
        enqueue_many = _ENQUEUES[distinct[0].type]
        flat_lists = [list(op.inputs[1:]) for op in distinct]
        names = self.names
        structure = Structure("dict", list(names)) if names else Structure.of(flat_lists[0], what)
        capacity = self._capacity()
        shapes = self.shapes
        if n is None:
            # What the enqueue ops make, as far as the queue allows: known shapes let blocks
            # of examples stack (reads keep the queue's own static shapes, see `_read`).
            shapes = [
                s.merge_with(_common_shape([tl[i] for tl in flat_lists], enqueue_many))
                for i, s in enumerate(shapes)
            ]
        if self._priority and names:
            # Its buffer finds the priority first among an example's flat components.
            raise ValueError("a PriorityQueue with names is left to TensorFlow")
        with tf1.name_scope(name, self._read_name(what)) as scope:
            served = batch_plan.plan(
                scope,
                structure,
                flat_lists,
                n,
                True,
                what=f"{type(self).__name__} '{self.name}'",
                capacity=capacity,
                enqueue_many=enqueue_many,
                shapes=shapes,
                dynamic_pad=self._dynamic_pad,
                allow_smaller_final_batch=what == "dequeue_up_to",
                shuffle=self._shuffle(),
                # One op run by N threads, or one op per thread (batch_join's lists).
                num_threads=len(ops) if len(distinct) == 1 else len(distinct),
            )
        served.priority = self._priority
        return served

    def _closed_flag(self) -> state_variables.StateVariable:
        if self._closed is None:
            with tf_internals.at_root(self.queue_ref.graph):
                # Reads counted while open, plan_steps.CLOSED once closed.
                self._closed = pipeline_lib.state_variable(
                    state_variables.initial(0, tf.int64), f"{self.name}_closed"
                )
        return self._closed

    def close(self, cancel_pending_enqueues=False, name=None):
        # Made by every QueueRunner before the first dequeue: it closes both, the queue
        # TensorFlow made and (once served) the pipeline's input.
        if tf.executing_eagerly():
            return super().close(cancel_pending_enqueues, name)
        closed = self._closed_flag()
        legacy = super().close(
            cancel_pending_enqueues, name=None if name is None else f"{name}_queue"
        )
        return tf.group(
            legacy,
            graph_ops.AssignVariableOp(
                resource=closed.handle, value=tf.constant(plan_steps.CLOSED, tf.int64)
            ),
            name=name or f"{self.name}_Close",
        )

    def is_closed(self, name=None):
        if self._served is None:
            return super().is_closed(name=name)
        count = graph_ops.ReadVariableOp(resource=self._closed_flag().handle, dtype=tf.int64)
        return tf.greater_equal(count, plan_steps.CLOSED, name=name or f"{self.name}_IsClosed")

    def size(self, name=None):
        if self._served is None:
            if tf.executing_eagerly():
                return super().size(name=name)
            # Read through an identity that reads the pipeline's instead once it is served.
            name = name or f"{self.name}_Size"
            size = tf.identity(super().size(name=f"{name}_queue"), name=name)
            self._early_sizes.append(size.op)
            return size
        # What the queue would hold: examples made and not yet read (fill_levels.py).
        return tf.identity(self._served[0].fill.examples(), name=name or f"{self.name}_Size")

    def _read_name(self, what: str) -> str:
        # Legacy's op names: the tensors a program fetches by name keep theirs.
        return f"{self.name}_{''.join(w.capitalize() for w in what.split('_'))}"

    def _capacity(self) -> int:
        capacity = self.queue_ref.op.get_attr("capacity")
        return capacity if capacity > 0 else 2**31 - 1  # -1: unbounded.

    def _serve_late(self) -> None:
        early_reads.serve(self)

    def _read_or_hold(self, what: str, n, name, read: Callable) -> Any:
        served = self._serve(what, n, name)
        if served is not None:
            return served
        if self._awaiting is None:
            return read(name)
        return early_reads.held(self, what, n, name or self._read_name(what), read)

    def dequeue(self, name=None):
        read = lambda nm: super(_Served, self).dequeue(name=nm)  # noqa: E731
        return self._read_or_hold("dequeue", None, name, read)

    def dequeue_many(self, n, name=None):
        read = lambda nm: super(_Served, self).dequeue_many(n, name=nm)  # noqa: E731
        return self._read_or_hold("dequeue_many", n, name, read)

    def dequeue_up_to(self, n, name=None):
        read = lambda nm: super(_Served, self).dequeue_up_to(n, name=nm)  # noqa: E731
        return self._read_or_hold("dequeue_up_to", n, name, read)


class FIFOQueue(_Served, tf.queue.FIFOQueue):
    """Drop-in replacement for `tf.compat.v1.FIFOQueue`.

    Differences: where a QueueRunner of the program fills it with enqueue ops (and no
    feed), its reads come from a tf.data pipeline (see the module docstring): with several
    runner threads, examples come in one thread's order; `size()` reports its capacity.
    Otherwise it is TensorFlow's queue.
    """

    _tf_init = tf_internals.unpatched_init(tf.queue.FIFOQueue)


class PaddingFIFOQueue(_Served, tf.queue.PaddingFIFOQueue):
    """Drop-in replacement for `tf.compat.v1.PaddingFIFOQueue`.

    Differences: as `FIFOQueue`; a served `dequeue_many` pads each batch as legacy padded
    it, to the longest example of the batch.
    """

    _tf_init = tf_internals.unpatched_init(tf.queue.PaddingFIFOQueue)
    _dynamic_pad = True


class RandomShuffleQueue(_Served, tf.queue.RandomShuffleQueue):
    """Drop-in replacement for `tf.compat.v1.RandomShuffleQueue`.

    Differences: as `FIFOQueue`; served, a tf.data shuffle of `min_after_dequeue` plus one
    read's examples (at most `capacity`), seeded with the seed the queue drew: with a seed,
    the order is the same in every run (legacy's depended on its threads).
    """

    _tf_init = tf_internals.unpatched_init(tf.queue.RandomShuffleQueue)

    def _shuffle(self) -> batch_plan.Shuffle:
        op = self.queue_ref.op
        drawn = (op.get_attr("seed"), op.get_attr("seed2"))
        # (0, 0) is how the op says "no seed": random, as tf.data's shuffle takes (None, None).
        return batch_plan.Shuffle(
            op.get_attr("min_after_dequeue"), None, drawn if any(drawn) else (None, None)
        )


class PriorityQueue(_Served, tf.queue.PriorityQueue):
    """Drop-in replacement for `tf.compat.v1.PriorityQueue`.

    Differences: as `FIFOQueue`, where its components have no names; served, a buffer of
    `capacity` examples (its runners kept the queue full) lets the lowest priority out
    first, and empties in priority order at the end of the input. Equal priorities leave
    oldest first (legacy left them in no defined order).
    """

    _tf_init = tf_internals.unpatched_init(tf.queue.PriorityQueue)
    _priority = True
