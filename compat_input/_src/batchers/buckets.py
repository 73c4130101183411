"""tf.contrib.training's bucketing batchers, `bucket` and `bucket_by_sequence_length`, on
tf.data.

Legacy built one queue per bucket, fed by conditional enqueues, and a top queue that
took a batch from whichever bucket filled. Here the bucket travels with each example as
one more component of a batch plan (batch_plan.py), and the plan's batch step groups by
it (plan_steps.py, `_batch_in_buckets`): everything else a batcher has (captured inputs,
keep_input, checkpoints, never a hang) is the batchers'.
"""

import numpy as np
import tensorflow as tf

from compat_input._src.batchers import batch_plan
from compat_input._src.batchers import legacy_arguments
from compat_input._src.batchers.structures import Structure
from compat_input._src.capture import capture as capture_lib
from compat_input._src.core import tracing

tf1 = tf.compat.v1


def _batch_sizes(batch_size, num_buckets: int):
    """One size for every bucket (an int or a tensor), or a tuple of one int per bucket."""
    if not isinstance(batch_size, (list, tuple)):
        size = legacy_arguments.batch_size(batch_size, per_run=False)
        if isinstance(size, int):
            return size
        # Buckets batch inside tf.data: a size read when the pipeline starts (a variable).
        capture_lib.capture([size], "bucket batch_size")
        return tf.cast(size, tf.int64)
    if len(batch_size) != num_buckets:
        raise ValueError(
            f"If batch_size is a list it must have num_buckets elements: got {len(batch_size)} "
            f"batch sizes ({list(batch_size)}) for num_buckets={num_buckets}."
        )
    sizes = tuple(tf.get_static_value(s) if isinstance(s, tf.Tensor) else s for s in batch_size)
    if any(s is None for s in sizes):
        raise ValueError(
            f"bucket: batch_size {list(batch_size)} has a size known only at run time; a "
            "tf.data pipeline fixes each bucket's batch size when it is built: pass ints."
        )
    return tuple(int(s) for s in sizes)


@tracing.without_autograph
def bucket(
    tensors,
    which_bucket,
    batch_size,
    num_buckets,
    num_threads=1,
    capacity=32,
    bucket_capacities=None,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    keep_input=True,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.contrib.training.bucket`.

    Differences: served by tf.data (no queues, no queue runners: the pipeline starts where
    the program starts its queue runners); batches leave in the order their buckets fill,
    as with one thread (legacy's order depended on thread timing); with
    `allow_smaller_final_batch`, each bucket's last partial batch is delivered at the end
    of the input (legacy lost them); `bucket_capacities` is checked and otherwise unused
    (a bucket holds at most one batch); no size summaries.
    """
    if tf.executing_eagerly():
        raise ValueError(
            "bucket builds a graph-mode input pipeline and eager execution is enabled: call "
            "tf.compat.v1.disable_eager_execution() first, or use tf.data's group_by_window."
        )
    sizes = _batch_sizes(batch_size, num_buckets)
    if bucket_capacities is not None and len(bucket_capacities) != num_buckets:
        raise ValueError(
            f"The list bucket_capacities ({bucket_capacities}) must have exactly num_buckets "
            f"({num_buckets}) elements."
        )
    structure = Structure.of(tensors, "bucket")
    flat = legacy_arguments.convert(structure.flatten(tensors))
    dense = [t for t in flat if not isinstance(t, tf.SparseTensor)]
    with tf1.name_scope(name, "bucket", dense) as scope:
        if not flat:
            raise ValueError("Expected at least one tensor in bucket().")
        which = tf.convert_to_tensor(which_bucket, tf.int32, name="which_bucket")
        # The key group_by_window groups by (plan_steps._batch_in_buckets), made with each
        # example: its key function then hands a component on, which tf.data does without
        # calling it (a call cost 16 us an example; the bucketing benchmark ran twice as
        # fast without it). A bucket out of range keys `num_buckets`, whose windows are
        # dropped.
        known = tf.logical_and(which >= 0, which < num_buckets)
        key = tf.where(known, tf.cast(which, tf.int64), tf.constant(num_buckets, tf.int64))
        plan = batch_plan.plan(
            scope,
            Structure("list"),
            [flat + [which, key]],
            sizes if not isinstance(sizes, tuple) else max(sizes),
            keep_input,
            what="bucket",
            capacity=capacity,
            enqueue_many=False,
            shapes=None if shapes is None else [*shapes, [], []],
            dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch,
            shuffle=None,
            num_threads=num_threads,
            shared_name=shared_name,
            per_run_size=False,
        )
        plan.buckets = (num_buckets, sizes)
        *batched, buckets, _ = batch_plan.serve(plan)
        return buckets[0], _as_legacy(structure, batched)


def _as_legacy(structure: Structure, batched: list):
    """A dict as a dict; anything else as a list, one tensor included (contrib's top
    queue always dequeued a list)."""
    batched = [_unknown_dense_shape(t) if isinstance(t, tf.SparseTensor) else t for t in batched]
    return structure.restore(batched) if structure.kind == "dict" else list(batched)


def _unknown_dense_shape(sparse: tf.SparseTensor) -> tf.SparseTensor:
    # Legacy's SparseTensors came back from a map of them, with no static dense shape.
    rank = sparse.dense_shape.shape
    shape = tf1.placeholder_with_default(sparse.dense_shape, rank)
    return tf.SparseTensor(sparse.indices, sparse.values, shape)


def _which_bucket(input_length: tf.Tensor, bucket_boundaries) -> tf.Tensor:
    """Bucket i holds lengths in [b[i-1], b[i]): the first, all below b[0]; the last, all
    from b[-1] on."""
    low = [np.iinfo(np.int32).min, *bucket_boundaries]
    high = [*bucket_boundaries, np.iinfo(np.int32).max]
    inside = tf.logical_and(low <= input_length, input_length < high)
    return tf.cast(tf.reduce_min(tf1.where(inside)), tf.int32)


def bucket_by_sequence_length(
    input_length,
    tensors,
    batch_size,
    bucket_boundaries,
    num_threads=1,
    capacity=32,
    bucket_capacities=None,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    keep_input=True,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.contrib.training.bucket_by_sequence_length`.

    Differences: as `bucket`.
    """
    if not isinstance(bucket_boundaries, (list, tuple)):
        raise TypeError(
            f"bucket_boundaries must be a list or tuple, but received: {bucket_boundaries}"
        )
    if not bucket_boundaries:
        raise ValueError("bucket_boundaries must not be empty")
    for low, high in zip(bucket_boundaries[:-1], bucket_boundaries[1:]):
        if not isinstance(low, int) or not isinstance(high, int):
            raise TypeError(f"bucket boundaries must be integers, but saw: {low} and {high}")
        if low >= high:
            raise ValueError(
                f"Buckets must contain sequential increasing lengths, but saw: {low} before {high}"
            )
    structure = Structure.of(tensors, "bucket_by_sequence_length")
    flat = structure.flatten(tensors)
    dense = [t for t in flat if not isinstance(t, tf.SparseTensor)]
    with tf1.name_scope(name, "bucket_by_sequence_length", [input_length, *dense]):
        input_length = tf.convert_to_tensor(input_length, tf.int32, name="input_length")
        _, batched = bucket(
            [input_length, *flat],
            _which_bucket(input_length, bucket_boundaries),
            batch_size,
            len(bucket_boundaries) + 1,
            num_threads=num_threads,
            capacity=capacity,
            bucket_capacities=bucket_capacities,
            shapes=None if shapes is None else [[], *shapes],
            dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch,
            keep_input=keep_input,
            shared_name=shared_name,
        )
        return batched[0], _as_legacy(structure, batched[1:])
