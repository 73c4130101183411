"""The steps of a batch plan's pipeline, one per part of the plan (batch_plan.py), each
`step(plan, dataset) -> dataset`, chained in the order of `STEPS`:

    examples (join) -> [skip bad records] -> [keep_input] -> [unbatch] -> [tf.data service]
    -> [shuffle] -> batch -> [until closed] -> prefetch
"""

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from compat_input._src.runtime import data_service


def skip_bad_records(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """Drops examples whose per-example graph fails, counting those that get through.

    tf.data cannot catch an error inside a map function, only drop the element
    (`ignore_errors`); `skipped_records` compares the two counters.
    """
    if plan.counters is None:
        return dataset
    handle = plan.counters[1].handle
    one = tf.constant(1, tf.int64)

    def count(*example):
        with tf.control_dependencies([graph_ops.AssignAddVariableOp(resource=handle, value=one)]):
            return tuple(tf.identity(x) if isinstance(x, tf.Tensor) else x for x in example)

    return dataset.ignore_errors(log_warning=True).map(count)


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


def until_closed(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    """A program's own queue, closed: no more reads are made; those made ahead come out.

    Checked once per read (a batch, or an example for `dequeue()`): once per example, the
    check's function call halved a vectorized queue's rate (61k examples/s to 28k)."""
    if plan.closed is None:
        return dataset
    handle = plan.closed

    def still_open(*example):
        del example
        return tf.logical_not(graph_ops.ReadVariableOp(resource=handle, dtype=tf.bool))

    return dataset.take_while(still_open)


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


def batch_examples(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    if plan.size is None:
        return dataset
    drop = not plan.allow_smaller_final_batch
    if plan.dynamic_pad:
        dataset = dataset.padded_batch(plan.size, drop_remainder=drop)
    else:
        dataset = dataset_ops.batch(dataset, plan.size, drop)
    if plan.keep_column and not plan.enqueue_many:
        dataset = dataset.map(lambda *x: x[:-1])  # Once per batch, not per example.
    return dataset


def prefetch_batches(plan, dataset: tf.data.Dataset) -> tf.data.Dataset:
    # Legacy held at most `capacity` examples in its queue; so do the shuffle buffer and
    # the batches made ahead together.
    if plan.size is None:
        ahead = max(1, plan.capacity - plan.shuffle_buffer)
    elif isinstance(plan.size, int):
        ahead = max(1, (plan.capacity - plan.shuffle_buffer) // plan.size)
    else:
        ahead = tf.data.AUTOTUNE
    return dataset_ops.prefetch(dataset, ahead)


STEPS = (
    skip_bad_records,
    keep_inputs,
    unbatch_many,
    through_service,
    shuffle_examples,
    batch_examples,
    until_closed,
    prefetch_batches,
)
