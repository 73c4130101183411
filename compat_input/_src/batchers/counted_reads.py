"""Reads of a count each run computes: legacy's `dequeue_many(n)` with a tensor `n`.

A batcher whose batch size is fed (facenet feeds `batch_size_placeholder` on every run, a
smaller one for the evaluation's last batch), or a program's own queue read with such a
count, cannot batch inside tf.data, whose batch size is fixed when the pipeline starts. Its
pipeline yields blocks of examples of a size fixed at build (plan_steps.block_size), and
each read stacks as many as the run asks for: the examples a read left of its last block
(`Pipeline.kept`, saved with the position), then blocks, in one `while_loop` over the
iterator's optional reads, a few turns a read rather than one an example.
"""

from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tracing
from compat_input._src.runtime import iterators
from compat_input._src.runtime import pipeline as pipeline_lib


def read_many(
    pipeline: pipeline_lib.Pipeline,
    count: tf.Tensor,
    allow_smaller: bool,
    name: Optional[str] = None,
    after: Optional[Callable] = None,
    blocks: Optional[bool] = None,
) -> Any:
    """`count` examples (a tensor each run computes: a fed batch size) stacked, as
    legacy's `dequeue_many(count)` took them from its queue (`dequeue_up_to` with
    `allow_smaller`). The examples are dense, of fully defined shapes, or padded (each
    batch padded to its longest example, as legacy's padding queue padded); the pipeline's
    elements are blocks of them where it keeps what reads leave (`pipeline.kept`), or
    where `blocks` says so (a queue's batches read by another count too), single examples
    otherwise (a queue read by `dequeue()` first).

    At the end of the input a shorter batch comes only with `allow_smaller`; otherwise
    OutOfRangeError, raised by the iterator itself, and the examples it found stay for
    a later read of fewer (a closed legacy queue kept them for a smaller dequeue).
    """
    flat_spec = tf.nest.flatten(pipeline.element_spec)
    if blocks is None:
        blocks = pipeline.blocks
    shapes = [s.shape[1:] if blocks else s.shape for s in flat_spec]
    kept = pipeline.kept  # What reads found and did not take: this one takes them first.
    guards, started = pipeline.read_guards()
    with tf.control_dependencies(guards):
        count = tf.cast(count, tf.int32)
        left = [v.read_value() for v in kept]

    def batch(found_all):
        with tf.control_dependencies([v.assign(x[count:]) for v, x in zip(kept, found_all)]):
            return [tf.identity(x[:count]) for x in found_all]

    def stacked(found_all):
        return _stacked(pipeline, found_all, count, allow_smaller, blocks, batch)

    if blocks:
        # Most runs find their count in what the last run left or in one block: one read
        # of the iterator at most, not the loop (its TensorArrays cost most of a read). At
        # the end, nothing left and an iterator at its end raise OutOfRangeError, as
        # legacy's closed empty queue did.
        found = tf.shape(left[0])[0]

        def more_than_left():
            # What is left (fewer than the count), else one block; the loop, made once
            # (each costs the build a while_loop and its TensorArrays), takes the rest.
            start = tf.cond(
                found > 0,
                lambda: [tf.identity(x) for x in left],
                lambda: tf.nest.flatten(iterators.get_next(pipeline.iterator)),
            )
            size = tf.shape(start[0])[0]

            def not_exactly():
                return tf.cond(size > count, lambda: batch(start), lambda: stacked(start))

            # Exactly the count: nothing to keep, so no assignment either.
            exact = lambda: [tf.identity(x) for x in start]  # noqa: E731
            return tf.cond(tf.equal(size, count), exact, not_exactly)

        # A block larger than the count leaves whole batches for the next runs.
        flat = tf.cond(found >= count, lambda: batch(left), more_than_left)
    else:
        flat = stacked(left)
    spec = pipeline.element_spec
    if pipeline.padded:
        half = len(flat) // 2
        flat, shapes, spec = _trimmed(flat[:half], flat[half:]), shapes[:half], spec[:half]
    shapes = [[None, *s] for s in shapes]
    return _named(pipeline, flat, shapes, name, pipeline.after_read, (started, after, False), spec)


def _trimmed(values: list, shapes: list) -> list:
    """Padded rows cut to the longest of the examples they hold (`shapes`, one row of
    each example's shape): a block is padded to its own longest, the rows a read takes
    of it to theirs, as legacy's padding queue padded each dequeue_many."""
    trimmed = []
    for value, shape in zip(values, shapes):
        rank = value.shape.rank - 1
        if rank == 0:
            trimmed.append(value)
            continue
        # No rows (a read at the end): nothing wider than none.
        longest = tf.reduce_max(tf.concat([shape, tf.zeros([1, rank], tf.int32)], 0), axis=0)
        start = tf.zeros([rank + 1], tf.int32)
        trimmed.append(tf.slice(value, start, tf.concat([[-1], longest], 0)))
    return trimmed


def _stacked(pipeline, left: list, count, allow_smaller: bool, blocks: bool, batch) -> list:
    """`left`, then the iterator's elements, stacked until `count` examples are found
    (one `while_loop` over its optional reads), or the end of the input is."""
    flat_spec = tf.nest.flatten(pipeline.element_spec)
    types = [s.dtype for s in flat_spec]
    shapes = [s.shape[1:] if blocks else s.shape for s in flat_spec]
    arrays = [
        tf.TensorArray(
            t,
            size=0,
            dynamic_size=True,
            element_shape=[None, *s],
            infer_shape=False,
            clear_after_read=s.is_fully_defined(),  # _padded_concat reads twice.
        )
        for s, t in zip(shapes, types)
    ]
    arrays = [a.write(0, x) for a, x in zip(arrays, left)]
    element_shapes = [tf.TensorShape([None, *s]) if blocks else s for s in shapes]

    def more(found, has, *arrays):
        del arrays
        return has & (found < count)

    def take(found, has, *arrays):
        del has
        optional = graph_ops.IteratorGetNextAsOptional(
            iterator=pipeline.resource, output_types=types, output_shapes=element_shapes
        )
        has = graph_ops.OptionalHasValue(optional=optional)
        values = tf.cond(
            has,
            lambda: graph_ops.OptionalGetValue(
                optional=optional, output_types=types, output_shapes=element_shapes
            ),
            # Past the end: an empty block, which adds nothing.
            lambda: [tracing.stand_in(s, t) for s, t in zip(element_shapes, types)],
        )
        if not blocks:
            values = [v[tf.newaxis] for v in values]
        size = tf.shape(values[0])[0] * tf.cast(has, tf.int32)
        index = arrays[0].size()
        arrays = [a.write(index, v[:size]) for a, v in zip(arrays, values)]
        return (found + size, has, *arrays)

    found, _, *arrays = tf.while_loop(
        more, take, (tf.shape(left[0])[0], tf.constant(True), *arrays)
    )
    # A padding queue's examples differ in shape: padded with zeros to the largest of the
    # batch, as legacy's PaddingFIFOQueue padded its dequeue_many.
    found_all = [
        a.concat() if s.is_fully_defined() else _padded_concat(a, s.rank, t)
        for a, s, t in zip(arrays, shapes, types)
    ]
    complete = found >= count
    if allow_smaller:
        complete |= found > 0

    def end_of_input():
        keep = [v.assign(x) for v, x in zip(pipeline.kept, found_all)]
        with tf.control_dependencies(keep):
            # The iterator is at its end: its own read raises OutOfRangeError.
            read = iterators.get_next(pipeline.iterator)
        with tf.control_dependencies(tf.nest.flatten(read)):
            return [
                tracing.stand_in(tf.TensorShape([0]).concatenate(s), t)
                for s, t in zip(shapes, types)
            ]

    return tf.cond(complete, lambda: batch(found_all), end_of_input)


def _padded_concat(array: tf.TensorArray, rank: int, dtype: tf.DType) -> tf.Tensor:
    """The rows of `array`'s elements (of other shapes), each padded with zeros (empty
    strings) to the largest shape among them."""
    size = array.size()

    def widest(i, most):
        shape = tf.shape(array.read(i))
        # An element without rows (nothing left by the last read) widens nothing.
        return i + 1, tf.maximum(most, shape[1:] * tf.minimum(shape[0], 1))

    _, most = tf.while_loop(lambda i, _: i < size, widest, (0, tf.zeros([rank], tf.int32)))

    def padded(i, out):
        rows = array.read(i)
        # Rows are never wider than `most`; an element without rows may be (cut to it).
        rows = tf.slice(
            rows,
            tf.zeros([rank + 1], tf.int32),
            tf.concat([[-1], tf.minimum(tf.shape(rows)[1:], most)], 0),
        )
        gap = most - tf.shape(rows)[1:]
        pads = tf.concat([[[0, 0]], tf.stack([tf.zeros_like(gap), gap], 1)], 0)
        return i + 1, out.write(i, tf.pad(rows, pads, constant_values=tf.zeros([], dtype)))

    out = tf.TensorArray(dtype, size=size, infer_shape=False, element_shape=[None] * (rank + 1))
    _, out = tf.while_loop(lambda i, _: i < size, padded, (0, out))
    return out.concat()


def read_one(pipeline: pipeline_lib.Pipeline, name: Optional[str] = None, after=None) -> Any:
    """One example of a pipeline of single examples that counted reads also take from (a
    queue read by `dequeue()` and `dequeue_many(n)`): the first that a count read left,
    else the iterator's next, so that every read takes examples in legacy's order."""
    flat_spec = tf.nest.flatten(pipeline.element_spec)
    guards, started = pipeline.read_guards()
    with tf.control_dependencies(guards):
        left = [v.read_value() for v in pipeline.kept]

    def from_left():
        with tf.control_dependencies([v.assign(x[1:]) for v, x in zip(pipeline.kept, left)]):
            return [tf.identity(x[0]) for x in left]

    def from_iterator():
        return tf.nest.flatten(iterators.get_next(pipeline.iterator))

    flat = tf.cond(tf.shape(left[0])[0] > 0, from_left, from_iterator)
    shapes = [s.shape for s in flat_spec]
    return _named(pipeline, flat, shapes, name, pipeline.after_read, (started, after, True))


def _named(pipeline, flat: list, shapes: list, name, after_read, read: tuple, spec=None) -> Any:
    """A read's tensors, of `shapes`, under the read's name, after the ops
    `after_read(element, *read)` makes; packed as `spec` (the pipeline's elements by
    default)."""
    spec = pipeline.element_spec if spec is None else spec
    flat = [tf.ensure_shape(t, s) for t, s in zip(flat, shapes)]
    pipeline.read_op_names.append(flat[0].op.name)
    element = tf.nest.pack_sequence_as(spec, flat)
    with tf.control_dependencies(after_read(element, *read)):
        flat = graph_ops.IdentityN(input=flat, name=name)
    return tf.nest.pack_sequence_as(spec, flat)
