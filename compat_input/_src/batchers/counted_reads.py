"""Reads of a count each run computes: legacy's `dequeue_many(n)` with a tensor `n`.

A batcher whose batch size is fed (facenet feeds `batch_size_placeholder` on every run, a
smaller one for the evaluation's last batch), or a program's own queue read with such a
count, cannot batch inside tf.data, whose batch size is fixed when the pipeline starts. Its
pipeline yields examples, and each read stacks as many as the run asks for, in one
`while_loop` over the iterator's optional reads (batch_plan.read).
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
) -> Any:
    """`count` elements (a tensor each run computes: a fed batch size) stacked, as
    legacy's `dequeue_many(count)` took them from its queue (`dequeue_up_to` with
    `allow_smaller`). The elements are dense, of fully defined shapes.

    At the end of the input a shorter batch comes only with `allow_smaller`; otherwise
    OutOfRangeError, raised by the iterator itself, and the elements it found stay for
    a later read of fewer (a closed legacy queue kept them for a smaller dequeue).
    """
    flat_spec = tf.nest.flatten(pipeline.element_spec)
    types = [s.dtype for s in flat_spec]
    shapes = [s.shape for s in flat_spec]
    with tf.control_dependencies([p.guard for p in pipeline.needs] + [pipeline.guard]):
        count = tf.cast(count, tf.int32)
        arrays = [
            tf.TensorArray(s.dtype, size=0, dynamic_size=True, element_shape=s.shape)
            for s in flat_spec
        ]
    # Elements found at the end of the input by a read that asked for more: the next
    # reads take them first.
    kept = [
        pipeline_lib.state_variable(tf.zeros([0, *s], t), "left", [None, *s])
        for s, t in zip(shapes, types)
    ]
    left = [v.read_value() for v in kept]
    from_left = tf.minimum(tf.shape(left[0])[0], count)

    def more(taken, has, *arrays):
        del arrays
        return has & (from_left + taken < count)

    def take(taken, has, *arrays):
        del has
        optional = graph_ops.IteratorGetNextAsOptional(
            iterator=pipeline.resource, output_types=types, output_shapes=shapes
        )
        has = graph_ops.OptionalHasValue(optional=optional)
        values = tf.cond(
            has,
            lambda: graph_ops.OptionalGetValue(
                optional=optional, output_types=types, output_shapes=shapes
            ),
            lambda: [tracing.stand_in(s, t) for s, t in zip(shapes, types)],
        )
        # Past the end the stand-in lands at `taken`, which no element takes: gathered
        # out below.
        arrays = [a.write(taken, v) for a, v in zip(arrays, values)]
        return (taken + tf.cast(has, tf.int32), has, *arrays)

    taken, _, *arrays = tf.while_loop(more, take, (tf.constant(0), tf.constant(True), *arrays))
    found = [a.gather(tf.range(taken)) for a in arrays]
    complete = tf.equal(from_left + taken, count)
    if allow_smaller:
        complete |= from_left + taken > 0

    def batch():
        with tf.control_dependencies([v.assign(x[from_left:]) for v, x in zip(kept, left)]):
            return [tf.concat([x[:from_left], f], 0) for x, f in zip(left, found)]

    def end_of_input():
        keep = [v.assign(tf.concat([x, f], 0)) for v, x, f in zip(kept, left, found)]
        with tf.control_dependencies(keep):
            # The iterator is at its end: its own read raises OutOfRangeError.
            read = iterators.get_next(pipeline.iterator)
        with tf.control_dependencies(tf.nest.flatten(read)):
            return [tf.zeros([0, *s], t) for s, t in zip(shapes, types)]

    flat = tf.cond(complete, batch, end_of_input)
    flat = [tf.ensure_shape(t, [None, *s]) for t, s in zip(flat, shapes)]
    pipeline.read_op_names.append(flat[0].op.name)
    element = tf.nest.pack_sequence_as(pipeline.element_spec, flat)
    with tf.control_dependencies([after(element)] if after else []):
        flat = graph_ops.IdentityN(input=flat, name=name)
    return tf.nest.pack_sequence_as(pipeline.element_spec, flat)
