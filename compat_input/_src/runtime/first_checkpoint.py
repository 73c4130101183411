"""A Supervisor's first checkpoint: its input positions are fresh ones, the start.

The stock Supervisor's checkpoint service saves at once as it starts, racing the first
steps while the input's buffers fill (youtube-8m's shape: a 30 MB position, 0.4 s of a save
on 2 cores, while the first 30 steps ran at 0.6x). Its model took no step, or the few the
main thread ran while the save was set up: the input's start, where a fresh position (a
few bytes a buffer slot) takes it back, as legacy's queues restarted the input at every
restore. Not only at global step 0: the save reads the step only once its own run is set
up, and one run in three of the skip_thoughts shape's found a first step done by then,
saved the real position (12.9 MB, 0.8-0.9 s) and made `Supervisor.stop()` wait for it.

Two marks per graph, resource variables no start initializes (their initialization is the
mark, so that a new session starts unmarked and a save before any start can test them):
"first", set as a Supervisor starts its checkpoint service and unset by the save that reads
it; "restored", set by any restore of a position (one restored is not the start).
"""

import weakref

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import state_variables
from compat_input._src.core import tf_internals

# Per graph: its marks and the predicate made of them.
_made: "weakref.WeakKeyDictionary[tf.Graph, dict]" = weakref.WeakKeyDictionary()


def _mark(graph: tf.Graph, name: str) -> state_variables.StateVariable:
    return tf_internals.made_once(
        _made.setdefault(graph, {}),
        name,
        graph,
        lambda: state_variables.StateVariable(
            state_variables.initial(True, tf.bool), f"compat_input/{name}_checkpoint"
        ),
    )


def starting(graph: tf.Graph) -> tf.Operation:
    """Marks the next save as a checkpoint service's first (supervisor.py runs it)."""
    return _mark(graph, "first").initializer


def restored(graph: tf.Graph) -> tf.Operation:
    """A new op that marks a position restored (checkpoint.py's restore runs it)."""
    mark = _mark(graph, "restored")
    return graph_ops.AssignVariableOp(resource=mark.handle, value=mark.initial_value)


def moved(pipeline) -> tf.Tensor:
    """Whether `pipeline`'s position saved now is its own, not a fresh one: it is started,
    and this save is not a Supervisor's first checkpoint (one after a restore is).

    Every pipeline of a graph reads one predicate, once per save: a fresh position for one
    and its own for another would restore a batcher's read-ahead files and its producer's
    start (each read twice).
    """
    graph = pipeline.started_handle.graph
    made = _made.setdefault(graph, {})
    not_at_start = tf_internals.made_once(
        made, "not_at_start", graph, lambda: tf.logical_not(_at_start(graph))
    )
    return tf.logical_and(pipeline.is_started, not_at_start)


def unmarking(graph: tf.Graph) -> tf.Operation:
    """What a save runs once it read `moved`: the next save is no first checkpoint."""

    def unmark():
        with tf.control_dependencies([_at_start(graph)]):
            handle = _mark(graph, "first").handle
            return graph_ops.DestroyResourceOp(resource=handle, ignore_lookup_error=True)

    return tf_internals.made_once(_made.setdefault(graph, {}), "unmark", graph, unmark)


def _at_start(graph: tf.Graph) -> tf.Tensor:
    """The graph's one predicate (made once): this save is a Supervisor's first checkpoint,
    with no position restored."""
    return tf_internals.made_once(
        _made.setdefault(graph, {}), "at_start", graph, lambda: _made_at_start(graph)
    )


def _made_at_start(graph: tf.Graph) -> tf.Tensor:
    starting(graph)  # Made with the Saver: a session that runs it then has it already.
    first = _mark(graph, "first").is_initialized()
    return tf.logical_and(first, tf.logical_not(_mark(graph, "restored").is_initialized()))
