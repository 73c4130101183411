"""Batch plans: what one legacy batcher call asks for, and the tf.data pipeline that does it.

Every batcher (`batch`, `shuffle_batch`, their `_join` and `maybe_` variants) is one
`BatchPlan`, made by `plan()` from the legacy arguments, checked as legacy checked them
(legacy_arguments.py: same errors). The plan names each part of the pipeline: the input lists with their
captured per-example graphs (capture/example_lists.py), the join strategy (capture/joins.py), the
`keep_input` filter, the shuffle and the batch. `assemble()` chains one small step per part
(plan_steps.py), and `serve()` makes the pipeline whose `get_next()` is returned in the legacy structure (a
list, a dict, or a bare tensor for a one-element list) with the legacy static shapes.
"""

import dataclasses
from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.bad_records import origins
from compat_input._src.bad_records import probes
from compat_input._src.batchers import counted_reads
from compat_input._src.batchers import legacy_arguments
from compat_input._src.batchers import plan_steps
from compat_input._src.batchers.structures import Structure
from compat_input._src.capture import hand_built_queues
from compat_input._src.capture import joins
from compat_input._src.capture.example_lists import ExampleList
from compat_input._src.capture.example_lists import capture_list
from compat_input._src.core import errors
from compat_input._src.core import graph_ops
from compat_input._src.core.options import options
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import fill_levels
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import position_costs
from compat_input._src.runtime import session_close

tf1 = tf.compat.v1


@dataclasses.dataclass(frozen=True)
class Shuffle:
    min_after_dequeue: int
    seed: Optional[int]
    # The (seed, seed2) pair a program's own RandomShuffleQueue drew when it was made: used
    # as they are, where a batcher draws its pair as it builds (legacy drew one either way).
    drawn: Optional[tuple] = None


@dataclasses.dataclass
class BatchPlan:
    """One batcher call: its parts, each assembled by one step below."""

    scope: str  # The name scope ("batch/", "shuffle_batch_1/"), which names the outputs.
    structure: Structure
    lists: list[ExampleList]
    join: Callable  # A strategy of capture/joins.py.
    keep: Any  # True, False, or a scalar/vector keep_input tensor.
    # int; legacy_arguments.PerRun: the count each run computes; None: no batches.
    size: Any
    capacity: int
    shuffle: Optional[Shuffle]
    dynamic_pad: bool
    allow_smaller_final_batch: bool
    enqueue_many: bool
    parallel: dict  # Dataset.map arguments: empty for one example at a time.
    # Under bad_records="skip": (examples entered, examples passed) counters.
    counters: Optional[tuple] = None
    # Examples the program took so far: a located error looks for the bad one from there.
    batched: Any = None
    last_taken: Any = None  # The last example's fingerprint (see `_final_after_error`).
    # The legacy `shared_name` (the batcher's, or a producer's it reads): a service job.
    shared_name: Optional[str] = None
    # The tf.data service its examples are made on, once assembled; None: this process.
    service: Optional[str] = None
    closed: Any = None  # A program's own queue's "closed" flag handle (batchers/queues.py).
    # A program's own PriorityQueue: examples leave lowest first component first.
    priority: bool = False
    # contrib.training's bucket: (number of buckets, the batch size of all, or a tuple of
    # one per bucket); the bucket is each example's last component.
    buckets: Optional[tuple] = None
    # A contrib batcher's own batching of the examples (batch_sequences_with_states: its
    # segments in lanes): a function of the examples' Dataset, in place of the batch step.
    regroup: Optional[Callable] = None
    # Why the pipeline is left out of checkpoints, where the plan knows (saved states).
    unsaved_because: Optional[str] = None
    fill: Any = None  # How far it runs ahead of its reads (runtime/fill_levels.py).

    @property
    def static_size(self) -> Optional[int]:
        """The batch dimension legacy gave its outputs: known only where every batch has it."""
        if self.allow_smaller_final_batch or not isinstance(self.size, int):
            return None
        if self.buckets is not None and isinstance(self.buckets[1], tuple):
            return None  # contrib's bucket: batch sizes per bucket.
        return self.size

    @property
    def keep_column(self) -> bool:
        """A scalar keep_input travels with each example as its last component."""
        return isinstance(self.keep, tf.Tensor) and self.keep.shape.ndims == 0

    @property
    def shuffle_buffer(self) -> int:
        """The examples held back, which legacy's queue held: the shuffle's, or a priority's."""
        if self.priority:
            return self.capacity
        if self.shuffle is None:
            return 0
        if self.size is None:  # One example per read.
            return max(1, min(self.capacity, self.shuffle.min_after_dequeue + 1))
        if not isinstance(self.size, int):
            return self.capacity
        return max(1, min(self.capacity, self.shuffle.min_after_dequeue + self.size))


def check_capacity(capacity: int, shuffle: Optional[Shuffle]) -> None:
    if shuffle is not None and capacity <= shuffle.min_after_dequeue:
        raise ValueError(
            f"capacity {capacity} must be bigger than min_after_dequeue "
            f"{shuffle.min_after_dequeue}."
        )


def plan(
    scope: str,
    structure: Structure,
    flat_lists: list,
    batch_size,
    keep_input,
    *,
    what: str,
    capacity: int,
    enqueue_many: bool,
    shapes,
    dynamic_pad: bool,
    allow_smaller_final_batch: bool,
    shuffle: Optional[Shuffle],
    num_threads: int,
    shared_name: Optional[str] = None,
    per_run_size: bool = True,
) -> BatchPlan:
    """The plan of one batcher call; raises legacy's errors for legacy's bad arguments.
    `per_run_size=False`: a tensor batch size is read once, as the pipeline starts (contrib's
    buckets batch inside tf.data)."""
    flat_lists = [legacy_arguments.convert(tl) for tl in flat_lists]
    keep = legacy_arguments.keep_input(keep_input, enqueue_many)
    legacy_arguments.check_dtypes(flat_lists)
    if batch_size is None:  # A queue's dequeue(): examples one at a time, of any shape.
        example_shapes, size = [tf.TensorShape(s) for s in shapes], None
    else:
        example_shapes = legacy_arguments.shapes(flat_lists, shapes, enqueue_many, dynamic_pad)
        size = legacy_arguments.batch_size(batch_size, per_run_size)
        if isinstance(size, legacy_arguments.PerRun):
            _check_per_run(flat_lists, what)
    lists = [capture_list(tl, keep, what, example_shapes, enqueue_many) for tl in flat_lists]
    for item in lists:
        item.what = scope.rstrip("/")  # The pipeline's name, as the run's report gives it.
        item.padded = dynamic_pad
        item.shuffled = shuffle is not None
    # Legacy order is one thread's order; parallel calls keep it (deterministic=True), and
    # only where no stateful op could see the difference.
    parallel = {}
    if num_threads > 1 and not any(item.captured.stateful for item in lists):
        parallel = {"num_parallel_calls": num_threads, "deterministic": True}
    counters = None
    if options.bad_records == "skip":
        counters = tuple(
            pipeline_lib.state_variable(initial(0, tf.int64), n)
            for n in ("entered_examples", "passed_examples")
        )
        for item in lists:
            item.entered = counters[0]
        parallel = {}  # One example at a time, so the counts are exact between runs.
    plan = BatchPlan(
        scope=scope,
        structure=structure,
        lists=lists,
        join=joins.choose(lists, what),
        keep=keep,
        size=size,
        capacity=capacity,
        shuffle=shuffle,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        enqueue_many=enqueue_many,
        parallel=parallel,
        counters=counters,
        shared_name=shared_name
        or next(
            (s.shared_name for item in lists for s in item.sources if s.shared_name),
            None,
        ),
    )
    if not parallel and counters is None and shuffle is None and keep is True:
        _line_up_blocks(plan)
    return plan


def _check_per_run(flat_lists: list, what: str) -> None:
    """A batch size computed each run stacks dense examples (counted_reads.py)."""
    if any(isinstance(t, tf.SparseTensor) for tl in flat_lists for t in tl):
        raise errors.CaptureError(
            f"{what}: a batch size computed at run time is served for dense examples; this one "
            "batches SparseTensors. Give batch_size as a Python int."
        )


def _line_up_blocks(plan: BatchPlan) -> None:
    """With one thread, blocks of examples that line up with the batches taken.

    One thread makes examples in legacy's order, and a bad record must fail no more than
    it did one example at a time: the batch it is part of (tf.data's batch drops what it
    gathered; the final partial batch is found again, bad_records/located_errors.py). A
    block that divides the batch fails only its own batch, wherever in it the error is.
    A size each run computes takes the pipeline's blocks (plan_steps.block_size): they
    line up with those.
    """
    if len(plan.lists) != 1 or plan.enqueue_many:
        return
    if isinstance(plan.size, int):
        plan.lists[0].lined_up_with = plan.size
    elif isinstance(plan.size, legacy_arguments.PerRun):
        plan.lists[0].lined_up_with = plan_steps.block_size(plan)


def assemble(plan: BatchPlan, logs: list) -> tf.data.Dataset:
    """The plan's Dataset of batches; example logs made on the way go into `logs`."""
    dataset = plan.join(plan.lists, plan.parallel, plan.counters is not None, logs)
    for step in plan_steps.STEPS:
        dataset = step(plan, dataset)
    return dataset


def _count_taken(plan: BatchPlan):
    """Counts the examples each run takes, once the batch is read (for bad_records/origins.py)."""
    if plan.batched is None:
        return None

    def count(batch):
        # Known at build: a constant of the graph's, not one more node after the read.
        size = fill_levels.length(tf.nest.flatten(batch)[0], dtype=tf.int64)
        # After the read: a static size would let the count run even when the read fails.
        with tf.control_dependencies(tf.nest.flatten(batch, expand_composites=True)):
            counted = graph_ops.AssignAddVariableOp(resource=plan.batched.handle, value=size)
            if plan.last_taken is None:
                return counted
            last = probes.fingerprints([t[-1:] for t in tf.nest.flatten(batch)])[0]
            return tf.group(counted, plan.last_taken.assign(last))

    return count


def _in_read_order(plan: BatchPlan) -> bool:
    """Whether the examples batched are the records read, one for one and in order."""
    return (
        len(plan.lists) == 1
        and plan.size is not None
        and plan.shuffle is None
        and plan.keep is True
        and not plan.enqueue_many
        and plan.counters is None
        and plan.buckets is None
    )


def _final_after_error(plan: BatchPlan) -> bool:
    """Whether the examples a batch gathered before a bad one can be delivered after it.

    tf.data's batch drops them when its input fails; legacy delivered them as the final
    partial batch. Where the examples are the records read, in order, dense and of one
    shape, `sess.run` (bad_records/located_errors.py) finds them again among the records logged and
    runs the failed step on them.
    """
    sources = plan.lists[0].sources
    return (
        plan.allow_smaller_final_batch
        and _in_read_order(plan)
        # A reader's log keeps its records in the order read (a producer's items may be
        # shuffled).
        and bool(sources)
        and all(s.reader is not None for s in sources)
        and isinstance(plan.size, int)
        and not plan.dynamic_pad
        and all(
            isinstance(t, tf.Tensor) and t.shape.is_fully_defined() for t in plan.lists[0].tensors
        )
    )


def serve(plan: BatchPlan) -> Any:
    """Builds the plan's pipeline; its next batch in the legacy structure and shapes."""
    return read(plan, build(plan))


def build(plan: BatchPlan) -> pipeline_lib.Source:
    """The plan's pipeline, built: a source that `read` reads."""
    logs: list = []
    over = plan.shuffle.min_after_dequeue if plan.shuffle else 0
    plan.fill = fill_levels.FillLevel(plan.scope.rstrip("/"), plan.capacity, over)
    if _in_read_order(plan):
        plan.batched = pipeline_lib.state_variable(initial(0, tf.int64), "batched")
    dataset = assemble(plan, logs)
    if _final_after_error(plan) and not plan.service:
        width = 8 * len(plan.lists[0].tensors)  # An 8-byte fingerprint per component.
        plan.last_taken = pipeline_lib.state_variable(initial(0, tf.uint8, [width]), "last")
    sources = [s for item in plan.lists for s in item.sources]
    source = pipeline_lib.Source(
        name=plan.scope.rstrip("/"),
        dataset=dataset,
        # A hand-built queue ends when the program closes it.
        finite=all(item.sources or item.captured.dequeues for item in plan.lists)
        and all(s.finite for s in sources),
        unsaved_because=(
            f"its examples come from the tf.data service at {plan.service}"
            if plan.service
            else plan.unsaved_because
        )
        or next((s.unsaved_because for s in sources if s.unsaved_because), None)
        or next(
            (hand_built_queues.UNSAVED_BECAUSE for item in plan.lists if item.captured.dequeues),
            None,
        ),
        batches=True,
        # A queue read by dequeue() first may be read by counts too.
        counted=plan_steps.counted(plan),
        fill=plan.fill,
        buffered=position_costs.buffered(plan.capacity, plan.lists[0]),
        service_job=plan.shared_name if plan.service else None,
        ops=tuple(op for item in plan.lists for op in item.captured.ops)
        + tuple(op for s in sources for op in s.ops),
        origins=origins.Origins(
            suspects=[
                origins.Suspect(
                    item.examples,
                    item.sources[0],
                    batched=plan.batched,
                    last_taken=plan.last_taken,
                    size=plan.size if isinstance(plan.size, int) else 0,
                    # The batch being made when the error came, and one more read ahead.
                    near=2 * plan.size if isinstance(plan.size, int) else 1024,
                    key=item.key(),
                )
                for item in plan.lists
                if len(item.sources) == 1
            ],
            readers=list({id(s.reader): s.reader for s in sources if s.reader}.values()),
            logs=logs,
        ),
    )
    for item in plan.lists:
        for dequeue in item.captured.dequeues:
            session_close.close_at_session_close(dequeue.inputs[0])
    for captured in sources:
        captured.captured = True
    source.make_pipeline()
    return source


def read(
    plan: BatchPlan,
    source: pipeline_lib.Source,
    name: Optional[str] = None,
    shapes=None,
    count=None,
    allow_smaller: Optional[bool] = None,
    blocks: Optional[bool] = None,
) -> Any:
    """The next batch of the plan's pipeline, as a new read (a program's own queue read
    twice takes two batches in one run, as two dequeues did). `shapes`: the static shapes
    the legacy op gave its outputs, where they knew less than the pipeline does. `count`:
    this read's own count of examples, where each run computes it (another dequeue_many(n)
    of a queue) or the pipeline makes examples one at a time (a queue read by dequeue()
    first); `allow_smaller`: such a read's short final batch, where not the plan's;
    `blocks`: that the pipeline's elements are batches this count is taken from."""
    pipeline = source.make_pipeline()
    if plan.counters is not None:
        pipeline.skip_counts = tuple(c.read_value() for c in plan.counters)
    if count is None and isinstance(plan.size, legacy_arguments.PerRun):
        count = plan.size.count
    if count is not None:
        batch = counted_reads.read_many(
            pipeline,
            count,
            plan.allow_smaller_final_batch if allow_smaller is None else allow_smaller,
            name=name or plan.scope,
            after=_count_taken(plan),
            blocks=blocks,
        )
    elif plan.size is None and pipeline.kept is not None:
        batch = counted_reads.read_one(pipeline, name=name or plan.scope, after=_count_taken(plan))
    else:
        batch = pipeline.get_next(name=name or plan.scope, after=_count_taken(plan))
    flat = tf.nest.flatten(batch)  # One component: a bare element, not a tuple.
    if shapes is not None:
        flat = [
            t if t.shape == s else tf1.placeholder_with_default(t, s) for t, s in zip(flat, shapes)
        ]
    source.register(tf.nest.flatten(flat, expand_composites=True))
    if plan.last_taken is not None:
        source.origins.outputs = flat
    if plan.regroup is not None:
        return tf.nest.pack_sequence_as(batch, flat)
    if plan.static_size is not None:
        for t in flat:
            if not isinstance(t, tf.SparseTensor):
                t.set_shape(tf.TensorShape([plan.static_size]).concatenate(t.shape[1:]))
    return plan.structure.restore(flat)
