"""The guard before a pipeline's first read: it passes once the pipeline is started.

A legacy program that ran its input before starting the queue runners hung on an empty
queue. Here the read fails with the fix, after waiting a moment: in a graph imported from
a meta-graph, TensorFlow's own runner threads start the input (pipeline.py), racing the
program's first run.
"""

import tensorflow as tf

from compat_input._src.core import calls
from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.runtime import start_ops

tf1 = tf.compat.v1

START_HINT = (
    "call tf.compat.v1.train.start_queue_runners(sess) (or compat_input.start_queue_runners), "
    "or create the session with a Supervisor or MonitoredTrainingSession, before running it"
)


# How long a run waits for a pipeline that was not started yet: in a graph imported from a
# meta-graph, TensorFlow's own runner threads start it, racing the program's first run.
_START_WAIT_SECONDS = 3.0


def _started_within_wait(started):
    # One function for every pipeline of a graph: made once, then a call op each. A v1 loop
    # of raw ops: `tf.while_loop` cost 8-12 ms to build (traced twice over in TF2 behaviour)
    # and left dead nodes in the function.
    frame = "compat_input_start_wait"

    def entered(value, constant=True):
        return graph_ops.Enter(data=value, frame_name=frame, is_constant=constant)

    since, limit = entered(tf.timestamp()), entered(tf.constant(_START_WAIT_SECONDS, tf.float64))
    handle = entered(started)
    first = entered(graph_ops.VarIsInitializedOp(resource=started), constant=False)
    started_now, _ = graph_ops.Merge(inputs=[first, first])  # Input 1: the next iteration's.
    with tf.control_dependencies([started_now]):  # A clock read in each iteration.
        waited = graph_ops.Sub(x=tf.timestamp(), y=since)
    waiting = graph_ops.LogicalAnd(
        x=graph_ops.LogicalNot(x=started_now), y=graph_ops.Less(x=waited, y=limit)
    )
    done, again = graph_ops.Switch(data=started_now, pred=graph_ops.LoopCond(input=waiting))
    # After the "again" side's identity: a control edge from the Switch itself is live on
    # both sides, and the loop ran one iteration past its end.
    with tf.control_dependencies([graph_ops.Identity(input=again).op]):
        next_value = graph_ops.NextIteration(data=graph_ops.VarIsInitializedOp(resource=handle))
    tf_internals.rewire_input(started_now.op, 1, next_value)
    return graph_ops.Exit(data=done)


def _checked(ready, message):
    # `tf.debugging.Assert` would make the message's constant twice.
    with tf.control_dependencies([graph_ops.Assert(condition=ready, data=[message], summarize=3)]):
        return tf.identity(ready)


def _started_or_fail(started, gate, message):
    del gate  # Only makes the call dead, and so not run, once the pipeline is started.
    return _checked(_wait(started), message)


def _started_or_starting(dataset, iterator, started, input_started, gate, message):
    # A pipeline left unstarted while the session's input was started (a reader a batcher
    # reads through its own pipeline) starts on its first direct read.
    del gate
    ready = tracing.branch(
        graph_ops.VarIsInitializedOp(resource=input_started),
        lambda: start_ops.start_if_needed_now(dataset, iterator, started),
        lambda: _wait(started),
    )
    return _checked(ready, message)


def _wait(started) -> tf.Tensor:
    # A call of one function, whichever guard waits: its loop is traced once a graph.
    return calls.shared_call("started_within_wait", _started_within_wait, [started])


def guard(started: tf.Tensor, name: str, deferred=None) -> tf.Operation:
    """Passes once the pipeline is started; fails naming the fix if it never is.

    `deferred` (the iterator's dataset and resource, and the graph's input-started mark)
    lets a pipeline that the start left alone start on its first read.
    """
    message = f"compat_input pipeline '{name}' was never started in this session: {START_HINT}."
    with tf1.name_scope("check_started"):
        # Every read runs the guard, and a started pipeline is the rule: the check is one
        # op then, and the function that waits, starts or fails runs only before. Its call
        # cost 180 µs a read, more than the rest of a PTB language-model step's input.
        # Switch and Merge, not tf.cond: in TF2 behaviour tf.cond is a function call too.
        # The call takes the Switch's "not started" output (`gate`), so it is dead, and not
        # run, once started; the "started" output is then what Merge passes on.
        started_now = graph_ops.VarIsInitializedOp(resource=started)
        gate, already = graph_ops.Switch(data=started_now, pred=started_now)
        message = tf.constant(message, name="message")
        if deferred is None:
            args = [started, gate, message]
            waited = calls.shared_call("started_or_fail", _started_or_fail, args)
        else:
            args = [deferred[0], deferred[1], started, deferred[2], gate, message]
            waited = calls.shared_call("started_or_starting", _started_or_starting, args)
        return graph_ops.Merge(inputs=[waited, already])[0].op
