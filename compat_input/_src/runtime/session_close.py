"""A session that closes while a pipeline waits on the program's own queue.

A pipeline that dequeues from a queue the program feeds from Python (facenet's input queue)
reads ahead, and at the end of what was fed its thread waits in that dequeue. TensorFlow
then crashed closing the session (a segmentation fault in `Session.close`, the process's
exit status 139, where legacy's runner threads were cancelled and the program ended with
0). So the queues pipelines dequeue from are closed first, cancelling the waiting read as
legacy's session close cancelled its runners' (`install()` wraps `Session.close`; without
it, each session that starts such pipelines gets its own `close` wrapped:
session_release.close_queues_first).
"""

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.runtime import input_waits
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import session_release


def close_at_session_close(queue_handle: tf.Tensor) -> None:
    """Makes, once per queue, the op that closes it when a session of its graph closes."""
    graph = queue_handle.graph
    state = pipeline_lib.graph_state(graph)
    with state.lock:
        if queue_handle.name in state.queue_closes:
            return
        with tf_internals.at_root(graph):
            state.queue_closes[queue_handle.name] = graph_ops.QueueCloseV2(
                handle=queue_handle, cancel_pending_enqueues=True
            )


def closing_queues_first(close):
    """`Session.close` that first closes the queues its graph's pipelines dequeue from."""

    def close_queues_then_session(self):
        input_waits.collect(self)  # Its pipelines' waits, for the report at exit.
        graph = getattr(self, "_graph", None)
        closes = list(pipeline_lib.graph_state(graph).queue_closes.values()) if graph else []
        session_release.run_queue_closes(self, closes)
        return close(self)

    close_queues_then_session.__wrapped__ = close
    return close_queues_then_session
