"""Reads of a program's queue made before its QueueRunner: served once the runner is made.

TensorFlow's threading guide and CS 20SI's queue example build the queue, its enqueue op,
the dequeue and the model, and only then the `QueueRunner`. When the first dequeue is made
nothing says yet what fills the queue (batchers/queues.py serves a queue from its runner's
enqueue ops), so the read is TensorFlow's dequeue, held behind an `IdentityN` that has the
dequeue's own name (the tensors the program holds and fetches by name). When a runner of
ours is made for the queue, the queue is served as if the runner had come first, and the
`IdentityN` reads the served tensors instead: the model built on the read, a fetch of it
and a feed of it all follow, and TensorFlow's dequeue is left unrun. A queue no runner of
ours ever fills (fed from Python, a token queue) keeps TensorFlow's dequeue behind the
`IdentityN`, and is named at exit as before.
"""

import logging
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from compat_input._src.batchers import legacy_fallback
from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals

logger = logging.getLogger("compat_input")


def held(queue, what: str, n, name: str, read: Callable[[str], Any]) -> Any:
    """`read(name)` (TensorFlow's dequeue), behind an IdentityN named as the read would be."""
    legacy = read(f"{name}_queue")
    flat = tf.nest.flatten(legacy)
    outputs = graph_ops.IdentityN(input=flat, name=name)
    for output, tensor in zip(outputs, flat):
        output.set_shape(tensor.shape)
    queue._early_reads.append((what, n, outputs[0].op))
    return tf.nest.pack_sequence_as(legacy, outputs)


def serve(queue) -> None:
    """Serves `queue`, whose reads were all made before this runner of it (see above)."""
    reads, queue._early_reads = queue._early_reads, []
    if queue._served is not None or not reads:
        return
    graph = queue.queue_ref.graph
    # Read inside a tf.cond or loop (a v1 context, or a v2 branch's graph of its own): a
    # served read would run on every path, or could not be read there at all.
    legacy_fallback.withdraw(queue._awaiting)
    if any(op._control_flow_context is not None or op.graph is not graph for _, _, op in reads):
        legacy_fallback.keep(
            f"{type(queue).__name__} '{queue.name}': read inside a tf.cond or while_loop "
            "before its QueueRunner was made (made before that read, the runner lets it be "
            "served)"
        )
        return
    # Legacy draws no op seed here: the program's random ops made afterwards draw its seeds.
    seeds = tf_internals.seed_counter(graph)
    try:
        with graph.as_default():
            for what, n, op in reads:
                # Named after the read it stands behind (which holds the read's own name).
                served = queue._serve(what, n, f"{op.name.rsplit('/', 1)[-1]}_served")
                if served is None:
                    return  # Kept for another reason (legacy_fallback says which).
                for index, tensor in enumerate(tf.nest.flatten(served)):
                    tf_internals.rewire_input(op, index, tensor)
    finally:
        tf_internals.set_seed_counter(graph, seeds)
    logger.info(
        "compat_input: %s '%s' served from tf.data: its QueueRunner was made after its first "
        "dequeue, which now reads the served pipeline",
        type(queue).__name__,
        queue.name,
    )
