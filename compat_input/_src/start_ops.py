"""Ops that start pipelines from the graph alone: for restores that come before the start,
and for graphs imported from meta-graphs, where nothing of ours runs.

Each op is a call of one of two functions traced once per graph (per signature,
tracing.shared_call), so a graph with 50 pipelines pays one call op each, not a traced
`tf.cond` each.
"""

import tensorflow as tf

from compat_input._src import tracing

tf1 = tf.compat.v1


def _initialize_missing(*pairs):
    handles, values = pairs[: len(pairs) // 2], pairs[len(pairs) // 2 :]
    for handle, value in zip(handles, values):
        tf.cond(
            tf.raw_ops.VarIsInitializedOp(resource=handle),
            lambda: tf.constant(True),
            lambda handle=handle, value=value: tracing.after(
                tf.raw_ops.AssignVariableOp(resource=handle, value=value)
            ),
        )
    return tf.constant(True)


def start_if_needed_now(dataset, iterator, started):
    """True, once the pipeline is started (by this call if it was not)."""

    def start():
        make = tf.raw_ops.MakeIterator(dataset=dataset, iterator=iterator)
        with tf.control_dependencies([make]):
            # Marked started only once the iterator is: a run waiting on the mark reads.
            return tracing.after(tf.raw_ops.AssignVariableOp(resource=started, value=True))

    return tf.cond(
        tf.raw_ops.VarIsInitializedOp(resource=started), lambda: tf.constant(True), start
    )


def initialize_missing(variables: list, after) -> tf.Operation:
    """Initializes those of `variables` not initialized yet, after the op `after`."""
    with tf.control_dependencies([after] if after is not None else []):
        if not variables:
            return tf.no_op()
        done = tracing.shared_call(
            "initialize_missing",
            _initialize_missing,
            [v.handle for v in variables] + [v.initial_value for v in variables],
        )
        return done.op


def start_if_needed(iterator, started_handle, after) -> tf.Operation:
    """Starts the pipeline of `iterator` if `started_handle` says it is not, after `after`."""
    with tf.control_dependencies([after]):
        initializer = iterator.initializer
        args = [initializer.inputs[0], initializer.inputs[1], started_handle]
        return tracing.shared_call("start_if_needed", start_if_needed_now, args).op
