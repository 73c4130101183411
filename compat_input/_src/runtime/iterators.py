"""A pipeline's options and initializable iterator, made from their ops alone.

`Dataset.with_options` serializes the options anew for each dataset, and
`make_initializable_iterator` walks the whole dataset graph to check that it is one graph:
together 2 ms per pipeline under a profiler; without them, 50 towers built 0.05 s sooner
(0.78 -> 0.73 s, alternating runs). The options are serialized once, the walk is left out
(our datasets are made in the graph of the pipeline), and the iterator is a TensorFlow v1
`Iterator` over the same two ops `make_initializable_iterator` makes, whose string handle
(and, for a reader's or producer's own, whose initializer) is made on first use.
"""

import functools

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing

tf1 = tf.compat.v1

# Every pipeline's options (and a probe's). tf.data's tuning thread (TF 2.21) misses its
# iterator's cancellation and sleeps out its period, up to 60 s, whenever an iterator is
# re-initialized or destroyed (50 towers took 200-260 s to close). Parallelism is the
# legacy call's `num_threads`: nothing to tune. And no static graph rewrites: they run at
# every iterator start (each `iterate` pass, each of 50 towers) and serialize the whole
# dataset graph, preloaded arrays included. Measured without them (benchmarks/run.py,
# interleaved): preloaded 27k -> 62k examples/s, validation passes 259k -> 344k, 50 towers
# start 2.7 s sooner; csv 434k -> 412k.
OPTIONS = tf.data.Options()
OPTIONS.autotune.enabled = False
OPTIONS.experimental_optimization.apply_default_optimizations = False


@functools.cache
def _serialized_options() -> bytes:
    """OPTIONS as the OptionsDataset op holds them, serialized once per process."""
    with tf.Graph().as_default():
        made = tf.data.Dataset.range(0).with_options(OPTIONS)._variant_tensor.op
        return made.get_attr("serialized_options")


def with_options(dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`dataset.with_options(OPTIONS)`, the options serialized once."""
    spec = dataset.element_spec
    if not tracing.dense(tf.nest.flatten(spec)):
        return dataset.with_options(OPTIONS)
    variant = graph_ops.OptionsDataset(
        input_dataset=dataset._variant_tensor,
        serialized_options=_serialized_options(),
        **tracing.typed(spec),
    )
    return tf.data.experimental.from_variant(variant, spec)


def one_shot(dataset: tf.data.Dataset):
    """`tf.compat.v1.data.make_one_shot_iterator(dataset)` with OPTIONS. Not only for speed:
    a one-shot iterator of default options starts tf.data's tuning thread on its first
    read, and the session's close then waited in the iterator's destructor for that thread
    to sleep out its period (the PTB tutorial: 16-19 s at `managed_session` exit in 2 of 3
    runs, an imported runner's one-shot iterator of `range(0)`)."""
    with tf_internals.our_deprecated_calls():
        return tf1.data.make_one_shot_iterator(with_options(dataset))


def initializable(dataset: tf.data.Dataset, deferred: bool = False):
    """`tf.compat.v1.data.make_initializable_iterator(dataset)`, its string handle made on
    first use. With `deferred`, its initializer too, at the graph's root: the iterator of a
    reader or producer, which only batchers may read (pipeline.py)."""
    spec = dataset.element_spec
    if not tracing.dense(tf.nest.flatten(spec)):
        with tf_internals.our_deprecated_calls():
            return tf1.data.make_initializable_iterator(dataset)
    resource = graph_ops.IteratorV2(shared_name="", container="", **tracing.typed(spec))
    variant = dataset._variant_tensor

    def make():
        return graph_ops.MakeIterator(dataset=variant, iterator=resource)

    initializer = None if deferred else make()
    made = tf_internals.deferred_iterator(resource, spec, make, initializer)
    if made is None:  # pragma: no cover - see tf_internals.deferred_iterator.
        made = tf1.data.Iterator(
            resource,
            initializer or make(),
            tf1.data.get_output_types(dataset),
            tf1.data.get_output_shapes(dataset),
            tf1.data.get_output_classes(dataset),
        )
    return made


# Dataset kinds that make each element in the reading thread, calling no function and
# waiting on no thread of their own (a producer's rows, repeated, shuffled, unbatched).
_INLINE = frozenset(
    {
        *("TensorDataset", "TensorSliceDataset", "RangeDataset", "RepeatDataset"),
        *("UnbatchDataset", "OptionsDataset", "TakeDataset", "SkipDataset", "ZipDataset"),
        *("BatchDatasetV2", "ConcatenateDataset", "ShuffleDatasetV3", "ShuffleDatasetV2"),
        "ShuffleAndRepeatDatasetV2",
    }
)


def inline(variant: tf.Tensor) -> bool:
    """Whether every dataset op behind `variant` is of the `_INLINE` kinds."""
    seen: set = set()
    pending = [variant.op]
    while pending:
        op = pending.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type not in _INLINE and any(t.dtype == tf.variant for t in op.outputs):
            return False
        pending.extend(t.op for t in op.inputs)
    return True


def get_next(iterator, name=None, inline_read: bool = False):
    """`iterator.get_next(name)`, through graph_ops where the elements are dense.

    `inline_read` (the pipeline is `inline`): read in the session's own thread
    (IteratorGetNextSync). IteratorGetNext hands every read to a tf.data thread and back:
    40-70 us a run more than a legacy queue's dequeue, a PTB language model's step in its
    test configuration taking 2 ms. Only where nothing behind the iterator can wait on a
    thread: a read that waited would hold one of the session's own threads.
    """
    spec = iterator.element_spec
    flat = tf.nest.flatten(spec)
    if not tracing.dense(flat):
        return iterator.get_next(name=name)
    resource = tf_internals.iterator_resource(iterator)
    read = graph_ops.IteratorGetNextSync if inline_read else graph_ops.IteratorGetNext
    tensors = read(iterator=resource, name=name, **tracing.typed(spec))
    for tensor, part in zip(tensors, flat):
        tensor.set_shape(part.shape)
    return tf.nest.pack_sequence_as(spec, tensors)


@tracing.without_autograph
def pulled_from(resource: tf.Tensor, element_spec) -> tf.data.Dataset:
    """The elements another iterator yields, each taken from it as this dataset needs one.

    Several datasets over one iterator share its stream: each element goes to exactly one
    of them, as each work item of a legacy filename queue went to the one reader that
    dequeued it. Ends when that iterator does: its OutOfRangeError ends a map that has no
    cardinality to preserve. The iterator must be started first. The pull is traced once
    per graph, the iterator an argument: every reader of a producer read by several pulls
    from it (four readers traced it four times, 20 ms a reader; an optional, a cond on it
    and a take_while made three functions and two branches, 10-15 ms more).
    """
    flat = tf.nest.flatten(element_spec)
    kinds = tracing.typed(element_spec)
    key = f"pulled_{[(s.dtype.name, str(s.shape)) for s in flat]}"

    def pull(_, iterator):
        values = graph_ops.IteratorGetNext(iterator=iterator, **kinds)
        for value, spec in zip(values, flat):
            value.set_shape(spec.shape)
        return tf.nest.pack_sequence_as(element_spec, values)

    pulls = tf.data.Dataset.from_tensors(tf.constant(0)).repeat()
    return tracing.shared_map(pulls, f"pull_{key}", pull, [resource], preserve_cardinality=False)
