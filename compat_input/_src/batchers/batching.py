"""Batchers: `batch`, `shuffle_batch`, their `_join` and `maybe_` variants, on tf.data.

Each batcher is a thin shim that keeps the legacy name, signature and defaults and hands
its arguments to `_batcher`, which makes one plan of the pipeline (batch_plan.py: the input
lists and their per-example graphs, the join strategy, keep_input, shuffle, batch) and
serves it. Differences from legacy are listed in each docstring and in the migration guide.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src.batchers import batch_plan
from compat_input._src.batchers import legacy_fallback
from compat_input._src.batchers.structures import Structure
from compat_input._src.core import tracing
from compat_input._src.runtime import fill_levels

tf1 = tf.compat.v1


@tracing.without_autograph
def _batcher(
    tensors_list: list,
    structure_source,
    batch_size,
    keep_input,
    *,
    what: str,
    default_name: str,
    name,
    shuffle: Optional[tuple] = None,  # (min_after_dequeue, seed)
    legacy: dict,  # The call's own arguments, for TensorFlow's function of the same name.
    **arguments,
):
    if tf.executing_eagerly():
        # Legacy batchers raise ValueError here (producers and readers raise RuntimeError).
        raise ValueError(
            f"{what} builds a graph-mode input pipeline and eager execution is enabled: call "
            "tf.compat.v1.disable_eager_execution() first, or use tf.data directly in "
            "TensorFlow 2 code."
        )
    structure = Structure.of(structure_source, what)
    flat_lists = [structure.flatten(t) for t in tensors_list]
    inputs = [t for tl in flat_lists for t in tl if not isinstance(t, tf.SparseTensor)]
    shuffle = None if shuffle is None else batch_plan.Shuffle(*shuffle)
    with tf1.name_scope(name, default_name, inputs) as scope:

        def serve():
            batch_plan.check_capacity(arguments["capacity"], shuffle)
            if not flat_lists or not flat_lists[0]:
                raise ValueError(f"Expected at least one tensor in {default_name}().")
            plan = batch_plan.plan(
                scope,
                structure,
                flat_lists,
                batch_size,
                keep_input,
                what=what,
                shuffle=shuffle,
                **arguments,
            )
            batch = batch_plan.serve(plan)
            # Legacy's summary of its queue, with what it meant: how full it is.
            fill_levels.write_summary(plan.fill)
            if plan.fill.last_wait is not None:  # configure(input_wait_summaries=True)
                fill_levels.write_wait_summary(plan.fill)
            return batch

        # Built again by legacy's function in the scope opened here: its outputs keep the
        # names legacy gave them ("batch:0").
        return legacy_fallback.served_or_legacy(
            what, scope, serve, lambda legacy_function: legacy_function(**{**legacy, "name": scope})
        )


def batch(
    tensors,
    batch_size,
    num_threads=1,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.batch`.

    Differences: served by tf.data; with `num_threads > 1` the order is that of one thread
    (legacy order depended on thread timing); `shared_name` names a tf.data service job
    when a service is configured (see `configure`), and is otherwise ignored.
    """
    legacy = dict(locals())
    return _batcher(
        [tensors],
        tensors,
        batch_size,
        True,
        what="batch",
        default_name="batch",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        num_threads=num_threads,
        shared_name=shared_name,
    )


def maybe_batch(
    tensors,
    keep_input,
    batch_size,
    num_threads=1,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_batch`.

    Differences: as `batch`; dropped examples are filtered out by tf.data.
    """
    legacy = dict(locals())
    return _batcher(
        [tensors],
        tensors,
        batch_size,
        keep_input,
        what="maybe_batch",
        default_name="batch",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        num_threads=num_threads,
        shared_name=shared_name,
    )


def batch_join(
    tensors_list,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.batch_join`.

    Differences: the lists take turns in a fixed order (legacy interleaved them by thread
    timing); readers over one producer read files side by side; `shared_name` names a tf.data service job
    when a service is configured (see `configure`), and is otherwise ignored.
    """
    legacy = dict(locals())
    return _join(
        tensors_list,
        batch_size,
        True,
        "batch_join",
        "batch_join",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def maybe_batch_join(
    tensors_list,
    keep_input,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_batch_join`.

    Differences: as `batch_join`.
    """
    legacy = dict(locals())
    return _join(
        tensors_list,
        batch_size,
        keep_input,
        "maybe_batch_join",
        "batch_join",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
    )


def shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    num_threads=1,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.shuffle_batch`.

    Differences: a `Dataset.shuffle` buffer of `min_after_dequeue + batch_size` (at most
    `capacity`) replaces the RandomShuffleQueue; with a `seed` the batches are reproducible,
    even with `num_threads > 1` (legacy's were not); `shared_name` names a tf.data service job
    when a service is configured (see `configure`), and is otherwise ignored.
    """
    legacy = dict(locals())
    return _batcher(
        [tensors],
        tensors,
        batch_size,
        True,
        what="shuffle_batch",
        default_name="shuffle_batch",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
        num_threads=num_threads,
        shared_name=shared_name,
    )


def maybe_shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    num_threads=1,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_shuffle_batch`.

    Differences: as `shuffle_batch`.
    """
    legacy = dict(locals())
    return _batcher(
        [tensors],
        tensors,
        batch_size,
        keep_input,
        what="maybe_shuffle_batch",
        default_name="shuffle_batch",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
        num_threads=num_threads,
        shared_name=shared_name,
    )


def shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.shuffle_batch_join`.

    Differences: as `batch_join` and `shuffle_batch`.
    """
    legacy = dict(locals())
    return _join(
        tensors_list,
        batch_size,
        True,
        "shuffle_batch_join",
        "shuffle_batch_join",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
        shuffle=(min_after_dequeue, seed),
    )


def maybe_shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_shuffle_batch_join`.

    Differences: as `batch_join` and `shuffle_batch`.
    """
    legacy = dict(locals())
    return _join(
        tensors_list,
        batch_size,
        keep_input,
        "maybe_shuffle_batch_join",
        "shuffle_batch_join",
        legacy=legacy,
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        shared_name=shared_name,
        name=name,
        shuffle=(min_after_dequeue, seed),
    )


def _join(tensors_list, batch_size, keep_input, what, default_name, **kwargs):
    if not isinstance(tensors_list, (list, tuple)) or not tensors_list:
        raise ValueError(f"Expected at least one input in {default_name}().")
    first = tensors_list[0]
    if isinstance(first, dict):
        keys = set(first)
        if any(set(t) != keys for t in tensors_list):
            raise ValueError("All dictionaries in tensors_list must have the same keys")
    return _batcher(
        list(tensors_list),
        first,
        batch_size,
        keep_input,
        what=what,
        default_name=default_name,
        # Legacy ran one enqueue thread per list.
        num_threads=len(tensors_list),
        **kwargs,
    )
