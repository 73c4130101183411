"""Hand-built queues: a dequeue from a queue the program made itself, inside the example.

Programs that feed a `FIFOQueue` from Python or from their own QueueRunner, then batch
what they dequeue, keep their queue. The dequeue runs inside the per-example function, in
the same step as the rest of the example, as it ran in the legacy enqueue op: an example
graph that fails (a `count_up_to` past its limit) cancels a dequeue blocked on an open,
empty queue and ends the input, where a separate dequeue stage would wait forever. A
dequeue from a closed, drained queue raises OutOfRangeError, which ends the input too
(example_lists.per_example_map).
"""

import tensorflow as tf

# Dequeue ops read here; the many/up-to kinds take their count from the program's op.
DEQUEUES = frozenset({"QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2"})
# Why a pipeline reading one cannot put its position into a checkpoint.
UNSAVED_BECAUSE = "a hand-built queue"


def dequeue(op: tf.Operation) -> list:
    """The program's dequeue `op` made again in the function being built: its outputs."""
    types = [t.dtype for t in op.outputs]
    kwargs = {"handle": tf.identity(op.inputs[0]), "component_types": types}
    if op.type != "QueueDequeueV2":
        kwargs["n"] = tf.identity(op.inputs[1])
    outputs = getattr(tf.raw_ops, op.type)(**kwargs)
    return [tf.ensure_shape(value, t.shape) for value, t in zip(outputs, op.outputs)]
