"""Ops that start pipelines from the graph alone: for restores that come before the start,
and for graphs imported from meta-graphs, where nothing of ours runs.

Each op is a call of one of two functions traced once per graph (per signature,
calls.shared_call), so a graph with 50 pipelines pays one call op each, not a traced
`tf.cond` each.
"""

import tensorflow as tf

from compat_input._src.core import calls
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing

tf1 = tf.compat.v1


def _assign_all(*pairs):
    handles, values = pairs[: len(pairs) // 2], pairs[len(pairs) // 2 :]
    assigned = [graph_ops.AssignVariableOp(resource=h, value=v) for h, v in zip(handles, values)]
    return tracing.after(tf.group(assigned))


def _initialize_missing(*pairs):
    # A group's variables are initialized together, always (see `initialize_missing`): its
    # last one tells for all. One cond per group: running a cond costs a session more than
    # the assignments (50 towers with one per variable started 1.5 s later).
    return tracing.branch(
        graph_ops.VarIsInitializedOp(resource=pairs[len(pairs) // 2 - 1]),
        lambda: tf.constant(True),
        lambda: _assign_all(*pairs),
    )


def start_if_needed_now(dataset, iterator, started):
    """True, once the pipeline is started (by this call if it was not)."""

    def start():
        make = graph_ops.MakeIterator(dataset=dataset, iterator=iterator)
        with tf.control_dependencies([make]):
            # Marked started only once the iterator is: a run waiting on the mark reads.
            return tracing.after(graph_ops.AssignVariableOp(resource=started, value=True))

    is_started = graph_ops.VarIsInitializedOp(resource=started)
    return tracing.branch(is_started, lambda: tf.constant(True), start)


def initialize_missing(variables: list, after) -> tf.Operation:
    """Initializes the group `variables` unless it is initialized, after the op `after`.

    Every way of initializing state takes whole groups: the groups a graph's state is
    made of, one per pipeline (pipeline.py), in order.
    """
    with tf.control_dependencies([after] if after is not None else []):
        if not variables:
            return tf.no_op()
        pairs = [v.handle for v in variables] + [v.initial_value for v in variables]
        return calls.shared_call("initialize_missing", _initialize_missing, pairs).op


def start_if_needed(dataset, iterator, started_handle, after) -> tf.Operation:
    """Starts the pipeline (`dataset` and `iterator` resource) if `started_handle` says it
    is not, after `after`."""
    with tf.control_dependencies([after]):
        args = [dataset, iterator, started_handle]
        return calls.shared_call("start_if_needed", start_if_needed_now, args).op
