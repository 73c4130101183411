"""The steps of a batch plan's pipeline, one per part of the plan (batch_plan.py), each
`step(plan, dataset) -> dataset`, chained in the order of `STEPS`:

    examples (join) -> [skip bad records] -> [keep_input] -> [unbatch] -> [tf.data service]
    -> [shuffle] -> [priority] -> batch -> [until closed] -> count made -> prefetch
"""

import tensorflow as tf

from compat_input._src.batchers import legacy_arguments
from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing
from compat_input._src.runtime import data_service


def skip_bad_records(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Drops examples whose per-example graph fails, counting those that get through.

    tf.data cannot catch an error inside a map function, only drop the element
    (`ignore_errors`); `skipped_records` compares the two counters.
    """
    if plan.counters is None:
        return dataset

    def count(example, handle):
        one = tf.constant(1, tf.int64)
        with tf.control_dependencies([graph_ops.AssignAddVariableOp(resource=handle, value=one)]):
            return tf.nest.map_structure(
                lambda x: tf.identity(x) if isinstance(x, tf.Tensor) else x, example
            )

    # Traced once, run in the reading thread (a map of tf.data's own hands each example
    # to the session's threads and back).
    kept = dataset.ignore_errors(log_warning=True)
    return tracing.shared_map(kept, "counted_kept", count, [plan.counters[1].handle])


def keep_inputs(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`keep_input`: False keeps nothing; a scalar is a column, filtered (and dropped after
    batching, once per batch); a vector was applied inside the per-example graph."""
    if plan.keep is False:
        return dataset.filter(lambda *x: False)
    if not plan.keep_column:
        return dataset
    dataset = dataset.filter(lambda *x: x[-1])
    return dataset.map(lambda *x: x[:-1]) if plan.enqueue_many else dataset


def unbatch_many(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """`enqueue_many`: each element is a batch of examples."""
    return dataset_ops.unbatch(dataset) if plan.enqueue_many else dataset


# The count a program's own queue's "closed" flag holds once `close()` ran (queues.py).
# Open, it counts the reads taken, which never come near it.
CLOSED = 2**62


def until_closed(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """A program's own queue, closed: no more reads are made; those made ahead come out.

    Checked once per read (a batch, or an example for `dequeue()`), in the thread that
    makes it: the flag counts the reads up to CLOSED, where counting raises OutOfRangeError,
    which ends a map that does not preserve cardinality. Inside tf.data's `take_while` the
    check handed each read to the session's threads and back: 70 us a batch of 32, and
    skip_thoughts' trainer shape made 560-620 steps/s with it, 690-720 without; once per
    example, it halved a vectorized queue's rate (61k examples/s to 28k)."""
    if plan.closed is None:
        return dataset

    def counted_while_open(element, handle):
        counted = graph_ops.ResourceCountUpTo(resource=handle, limit=CLOSED, T=tf.int64)
        flat = tf.nest.flatten(element)
        with tf.control_dependencies([counted]):  # One output waits for the check.
            flat[0] = tf.identity(flat[0])
        return tf.nest.pack_sequence_as(element, flat)

    # A queue holds dense tensors only: the map is always one traced function (tf.data's
    # own map, for composite elements, would turn the error into an InvalidArgumentError).
    return tracing.shared_map(
        dataset, "until_closed", counted_while_open, [plan.closed], preserve_cardinality=False
    )


def through_service(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """The examples made on the tf.data service's workers, when one is configured."""
    served = data_service.distribute(dataset, plan.scope.rstrip("/"), plan.shared_name)
    if served is not dataset:
        plan.service = data_service.address()
    return served


def shuffle_examples(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    if plan.shuffle is None:
        return dataset
    return dataset_ops.shuffle(
        dataset, plan.shuffle_buffer, seed=plan.shuffle.seed, drawn=plan.shuffle.drawn
    )


def prioritize_examples(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """A program's own PriorityQueue: the lowest priority (first component) of what it
    holds leaves first.

    Its runners kept it full; so here a buffer of `capacity` examples fills, then each
    example that comes in lets the lowest of the buffer and itself out, and at the end of
    the input the buffer empties in order. One `scan` over the examples and `capacity`
    end marks; ties leave oldest first.
    """
    if not plan.priority:
        return dataset
    structure = dataset.element_spec
    specs = tf.nest.flatten(structure)
    size, highest = plan.capacity, tf.int64.max
    zeros = tuple(tf.zeros(s.shape, s.dtype) for s in specs)
    marked = dataset.map(lambda *x: (True, tuple(tf.nest.flatten(x))))
    ends = tf.data.Dataset.from_tensors((False, zeros)).repeat(size)
    # The buffer: which slots are filled, when each came (for ties), the examples.
    start = (
        tf.zeros([size], tf.bool),
        tf.zeros([size], tf.int64),
        tf.constant(0, tf.int64),
        tuple(tf.zeros([size, *s.shape], s.dtype) for s in specs),
    )

    def step(state, item):
        filled, arrived, count, buffers = state
        real, example = item
        # The lowest priority held, oldest first among equals.
        keys = tf.where(filled, buffers[0], highest)
        lowest = keys[tf.argmin(keys, output_type=tf.int32)]
        oldest = tf.argmin(
            tf.where(tf.equal(keys, lowest), arrived, tf.int64.max), output_type=tf.int32
        )
        free = tf.logical_not(filled)
        has_free = tf.reduce_any(free)
        free_slot = tf.argmax(tf.cast(free, tf.int32), output_type=tf.int32)
        store = real & has_free  # Filling: nothing leaves yet.
        passes = real & ~has_free & (example[0] < lowest)  # Lower than all it holds.
        swap = real & ~has_free & ~passes  # The lowest held leaves, the example stays.
        drain = ~real & tf.reduce_any(filled)
        slot = tf.where(store, free_slot, oldest)
        write = store | swap
        out = tuple(tf.where(passes, x, b[oldest]) for x, b in zip(example, buffers))
        buffers = tuple(
            tf.tensor_scatter_nd_update(b, [[slot]], [tf.where(write, x, b[slot])])
            for x, b in zip(example, buffers)
        )
        filled = tf.tensor_scatter_nd_update(
            filled, [[slot]], [tf.where(write, True, tf.where(drain, False, filled[slot]))]
        )
        arrived = tf.tensor_scatter_nd_update(
            arrived, [[slot]], [tf.where(write, count, arrived[slot])]
        )
        return (filled, arrived, count + 1, buffers), (passes | swap | drain, out)

    emitted = marked.concatenate(ends).scan(start, step).filter(lambda leaves, _: leaves)
    return emitted.map(lambda _, example: tf.nest.pack_sequence_as(structure, list(example)))


def _padded_batch(dataset: tf.data.Dataset, size, drop: bool) -> tf.data.Dataset:
    """`dynamic_pad`: each component padded to the longest of its batch, 0 or b"".

    tf.data's padded_batch takes no SparseTensor, which legacy's padding queue carried
    beside the padded ones: with one, the variable components batch as ragged rows,
    padded the same way."""
    if all(isinstance(s, tf.TensorSpec) for s in tf.nest.flatten(dataset.element_spec)):
        return dataset.padded_batch(size, drop_remainder=drop)
    ragged = dataset.ragged_batch(size, drop_remainder=drop)
    return ragged.map(
        lambda *x: tuple(t.to_tensor() if isinstance(t, tf.RaggedTensor) else t for t in x)
    )


def _batch_in_buckets(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """contrib.training's `bucket`: each example joins the bucket its last component keys,
    and a bucket's batch leaves when it is full, in the order they fill (legacy's order
    with one thread). At the end of the input a bucket's partial batch leaves only with
    `allow_smaller_final_batch` (legacy's bucket queues were never closed, so it lost them
    either way; contrib's documentation promised them)."""
    if plan.keep_column:
        dataset = dataset.map(lambda *x: x[:-1])
    count, sizes = plan.buckets
    per_bucket = isinstance(sizes, tuple)
    drop = not plan.allow_smaller_final_batch

    def size_of(key):
        if per_bucket:  # The key past the last bucket holds the examples of none.
            return tf.gather(tf.constant(sizes + (1,), tf.int64), key)
        return tf.cast(sizes, tf.int64)

    def key_of(*x):
        # The key buckets.py made with the example (`num_buckets` for none), handed on.
        return x[-1]

    def batched(key, window):
        # With drop, a bucket's last partial batch at the end of the input is left out.
        size = size_of(key)
        batches = (
            _padded_batch(window, size, drop) if plan.dynamic_pad else window.batch(size, drop)
        )
        return batches.take(tf.where(key < count, tf.constant(-1, tf.int64), 0))

    return dataset.group_by_window(key_of, batched, window_size_func=size_of)


def block_size(plan) -> int:
    """How many examples a block holds where each read takes a count its run computes:
    the count most reads ask for where known (a queue's first count, the default of a
    `placeholder_with_default`), so that a read takes one block; else a quarter of the
    capacity, at most 64. Larger blocks take fewer
    turns of a read's loop and keep more examples read ahead."""
    if any(item.captured.dequeues for item in plan.lists):
        # A queue the program fills itself (facenet enqueues each epoch's file names from
        # Python) may hold fewer than a block while a read waits: one example a block, as
        # legacy's dequeue took what its queue held.
        return 1
    if plan.size.hint is not None and plan.size.hint > 0:
        return plan.size.hint
    return max(1, min(64, plan.capacity // 4))


def _with_shapes(example):
    """An example's components, then the shape of each (dynamic_pad, a fed batch size)."""
    example = example if isinstance(example, tuple) else (example,)
    return (*example, *(tf.shape(t) for t in example))


def counted(plan):
    """How counted reads take the pipeline's elements (Source.counted), or None."""
    if isinstance(plan.size, legacy_arguments.PerRun):
        return "padded blocks" if plan.dynamic_pad else "blocks"
    return "examples" if plan.size is None else None


def batch_examples(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    if plan.regroup is not None:
        return plan.regroup(dataset)
    if plan.size is None:
        return dataset
    if isinstance(plan.size, legacy_arguments.PerRun):
        # Each read stacks its own count from blocks (counted_reads.py).
        if plan.keep_column and not plan.enqueue_many:
            dataset = dataset.map(lambda *x: x[:-1])
        if plan.dynamic_pad:
            # Each example's shapes ride beside its padded values: a read pads the examples
            # it takes to the longest among them, as legacy did, not to the block's longest.
            dataset = tracing.shared_map(dataset, "with_shapes", _with_shapes)
            return dataset.padded_batch(block_size(plan))
        return dataset_ops.batch(dataset, block_size(plan), False)
    if plan.buckets is not None:
        return _batch_in_buckets(plan, dataset)
    drop = not plan.allow_smaller_final_batch
    if plan.dynamic_pad:
        dataset = _padded_batch(dataset, plan.size, drop)
    else:
        dataset = dataset_ops.batch(dataset, plan.size, drop)
    if plan.keep_column and not plan.enqueue_many:
        dataset = dataset.map(lambda *x: x[:-1])  # Once per batch, not per example.
    return dataset


def count_made(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Counts the examples made, once per element (runtime/fill_levels.py)."""
    return plan.fill.count_made(dataset, examples=plan.size is None and plan.regroup is None)


def prefetch_batches(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    # Legacy held at most `capacity` examples in its queue; so do the shuffle buffer and
    # the batches made ahead together.
    per_element = None  # Examples an element holds, where fixed.
    if plan.regroup is not None:
        ahead = 2  # Batches of a contrib batcher (legacy's capacity counted examples).
    elif plan.size is None:
        ahead, per_element = max(1, plan.capacity - plan.shuffle_buffer), 1
    elif isinstance(plan.size, legacy_arguments.PerRun):
        per_element = block_size(plan)
        ahead = max(1, (plan.capacity - plan.shuffle_buffer) // per_element)
    elif isinstance(plan.size, int):
        ahead, per_element = max(1, (plan.capacity - plan.shuffle_buffer) // plan.size), plan.size
    else:
        ahead = tf.data.AUTOTUNE
    if per_element is not None and plan.buckets is None:
        plan.fill.room = ahead * per_element
    return dataset_ops.prefetch(dataset, ahead)


STEPS = (
    skip_bad_records,
    keep_inputs,
    unbatch_many,
    through_service,
    shuffle_examples,
    prioritize_examples,
    batch_examples,
    until_closed,
    count_made,
    prefetch_batches,
)
