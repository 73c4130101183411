"""Hand-built queues: a dequeue from a queue the program made itself, as a pipeline source.

Programs that feed a `FIFOQueue` from Python or from their own QueueRunner, then batch
what they dequeue, keep their queue; the batcher reads it through this source, which
dequeues one element per pull and ends when the queue is closed and drained.
"""

import tensorflow as tf

from compat_input._src import graph_ops
from compat_input._src import pipeline as pipeline_lib
from compat_input._src import tracing


@tracing.without_autograph
def source(op: tf.Operation) -> pipeline_lib.Source:
    """A dequeue from a hand-built queue, served as a source that ends with the queue."""
    handle = op.inputs[0]
    types = [t.dtype for t in op.outputs]
    shapes = [t.shape for t in op.outputs]
    many = op.type != "QueueDequeueV2"
    count = op.inputs[1] if many else None
    needed = 1 if count is None else count

    def pull(_):
        closed = graph_ops.QueueIsClosedV2(handle=handle)
        drained = tf.logical_and(closed, graph_ops.QueueSizeV2(handle=handle) < needed)

        def stop():
            return [tf.constant(False)] + [tracing.stand_in(s, t) for t, s in zip(types, shapes)]

        def take():
            raw = getattr(tf.raw_ops, op.type)
            kwargs = {"handle": handle, "component_types": types}
            if many:
                kwargs["n"] = count
            return [tf.constant(True)] + list(raw(**kwargs))

        return tuple(tf.cond(drained, stop, take))

    dataset = (
        tf.data.Dataset.from_tensors(tf.constant(0))
        .repeat()
        .map(pull)
        # A dequeue that blocked on an open queue fails when the queue is closed under it;
        # that element is dropped and the next pull sees the queue closed and drained.
        .apply(tf.data.experimental.ignore_errors())
        .take_while(lambda ok, *_: ok)
        .map(lambda ok, *values: tuple(tf.ensure_shape(v, s) for v, s in zip(values, shapes)))
    )
    source = pipeline_lib.Source(
        name=op.name, dataset=dataset, unsaved_because="a hand-built queue"
    )
    source.register(list(op.outputs))
    return source
