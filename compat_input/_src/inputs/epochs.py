"""Epochs of a producer's rows: the Dataset behind every `*_input_producer`."""

import sys
from typing import Optional

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing


def _epoch(tensor, counter, empty, seeds, rows):
    """One epoch of `tensor`'s rows (see `epochs_dataset`)."""
    value = tensor
    if empty is not None:
        value = _ended_if_empty(value, *empty)
    if counter is not None:

        def bump():
            one = tf.constant(1, tf.int64)
            with tf.control_dependencies(
                [graph_ops.AssignAddVariableOp(resource=counter, value=one)]
            ):
                return tf.constant(True)

        # Uninitialized (no local init ran) is allowed: the counter is informational.
        initialized = graph_ops.VarIsInitializedOp(resource=counter)
        # Switch and Merge (tracing.branch): a tf.cond here traced two branch functions.
        bumped = tracing.branch(initialized, bump, lambda: tf.constant(False))
        with tf.control_dependencies([bumped]):
            value = tf.identity(value)
    if seeds is not None:
        value = tf.raw_ops.RandomShuffle(value=value, seed=seeds[0], seed2=seeds[1])
    return value if rows is None else rows(value)


def _ended_if_empty(value, handle, message):
    # Legacy's runner failed and closed the queue: dequeues raised OutOfRangeError. Here the
    # message is printed and a count past its limit (0) ends the input.
    def end():
        with tf.control_dependencies([tf.print(message, output_stream=sys.stderr)]):
            stop = graph_ops.ResourceCountUpTo(resource=handle, limit=0, T=tf.int64)
        with tf.control_dependencies([stop]):
            return tf.identity(value)

    return tracing.branch(tf.size(value) > 0, lambda: tf.identity(value), end)


@tracing.without_autograph
def epochs_dataset(
    tensor: tf.Tensor,
    num_epochs: Optional[int],
    shuffle: bool,
    seed: Optional[int],
    counter: Optional[tf.Variable] = None,
    empty=None,
    rows=None,
    rows_key=None,
) -> tf.data.Dataset:
    """Whole epochs of `tensor`'s rows, each shuffled afresh, one after another.

    `rows(epoch)` maps a whole epoch (input_producer's shape check) before it is split into
    elements: one op per epoch instead of a map per element, which costs tens of
    microseconds each. `empty`: `(state handle, message)`, to end the input
    with that message when `tensor` is empty. The epoch function is traced once per graph
    and seeds (tracing.shared_map) where `rows` is None or named by `rows_key`.
    """
    seeds = None
    if shuffle:
        # Drawn here, from the program's graph, once, as legacy's random_shuffle drew them:
        # a random op made inside the function would take the function graph's own seed
        # counter, and every random op the program makes after the input another seed.
        drawn = tf.compat.v1.get_seed(seed)
        seeds = (drawn[0] or 0, drawn[1] or 0)
    args = [tensor]
    if counter is not None:
        args.append(counter.handle)
    if empty is not None:
        args.extend(empty)
    shareable = rows is None or rows_key is not None
    key = f"epoch_{counter is not None}_{empty is not None}_{seeds}_{rows_key}"

    def epoch(_, tensor, *rest):
        rest = list(rest)
        handle = rest.pop(0) if counter is not None else None
        check = (rest.pop(0), rest.pop(0)) if empty is not None else None
        return _epoch(tensor, handle, check, seeds, rows)

    count = -1 if num_epochs is None else num_epochs
    if counter is None and empty is None and not shuffle and rows is None:
        # The same rows each epoch: no function for the pipeline to instantiate.
        return dataset_ops.unbatch(dataset_ops.repeated(tensor, count))
    epochs = tf.data.Dataset.from_tensors(tf.constant(0)).repeat(count)
    # Without preserve_cardinality (the tf.compat.v1 map's choice): an OutOfRangeError
    # raised by the empty check ends the input.
    whole = tracing.shared_map(
        epochs, key if shareable else None, epoch, args, preserve_cardinality=False
    )
    return dataset_ops.unbatch(whole)
