"""The one runner in `QUEUE_RUNNERS` that stands for every compat_input pipeline of a graph.

Whatever starts queue runners (`start_queue_runners`, ours or TensorFlow's, a `Supervisor`,
`MonitoredTrainingSession`, `qr.create_threads`) calls its `create_threads`, which starts
the graph's pipelines (pipeline.start_pipelines). Exported in a meta-graph, it is a valid
QueueRunnerDef whose threads start the pipelines of the imported graph.
"""

import weakref

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.runtime import iterators
from compat_input._src.runtime import start_ops

tf1 = tf.compat.v1


class PipelineRunner:
    """Stands in `QUEUE_RUNNERS` so that every way of starting queue runners starts pipelines.

    It has the QueueRunner surface that stock TensorFlow code touches; its threads list is
    empty because tf.data runs the work, so `coord.join(threads)` returns at once.

    `export_meta_graph` serializes QUEUE_RUNNERS with `QueueRunner.to_proto`, which reads
    `queue`, `enqueue_ops`, `close_op` and `cancel_op`: a root no-op, and one op per
    pipeline that starts it if it is not started yet, then raises OutOfRangeError. So the
    runner exports as a valid QueueRunnerDef; imported (with or without compat_input),
    TensorFlow's own runner threads each start one pipeline and end. No registry patch.
    """

    _queue_closed_exception_types = (tf.errors.OutOfRangeError,)

    def __init__(self, graph: tf.Graph, start):
        self._graph_ref = weakref.ref(graph)
        self._start = start  # start(sess, graph): pipeline.start_pipelines.
        # Made at the root of the graph, outside whatever scope the first pipeline is in.
        with tf_internals.at_root(graph):
            self.queue = tf.no_op(name="compat_input_pipelines")
            # Its next element raises OutOfRangeError: how a runner thread learns it is done.
            # An iterator made in each run over an empty range, with every pipeline's
            # options (untuned: tf.data's tuning thread made a close wait out its sleep). A
            # one-shot iterator traced a dataset function, 4-10 ms of every program's build,
            # and drew a seed from the graph's counter, which legacy's runners never do.
            empty = iterators.with_options(tf.data.Dataset.range(0))
            self._spec = tracing.typed(empty.element_spec)
            self._empty = graph_ops.AnonymousIteratorV3(name="compat_input_end", **self._spec)
            self._made = graph_ops.MakeIterator(
                dataset=empty._variant_tensor, iterator=self._empty, name="compat_input_end"
            )
        self.close_op = self.cancel_op = self.queue
        # Exported only: one op per pipeline that starts it if it is not started yet, then
        # ends its runner thread. A graph imported from a meta-graph, with or without
        # compat_input in the importing process, starts its input with TensorFlow's own
        # runner threads. Here `create_threads` starts the pipelines itself, threadless.
        self.enqueue_ops: list = []

    def add(self, pipeline) -> tf.Operation:
        """Registers `pipeline`; returns the op that starts it unless it is started."""
        # Made now, not when exported: `export_meta_graph` copies the graph before it reads
        # the collections, and the imported runner would name ops it lacks.
        with tf_internals.at_root(self._graph_ref()), tf1.name_scope(f"{pipeline.name}_start_once"):
            started = start_ops.start_if_needed(
                pipeline.variant,
                pipeline.resource,
                pipeline.started_handle,
                pipeline.state_initialized(),
            )
            # Made after the start: an error raised first would cancel the start.
            with tf.control_dependencies([started, self._made]):
                self.enqueue_ops.append(
                    graph_ops.IteratorGetNext(iterator=self._empty, **self._spec)[0].op
                )
        return started

    @property
    def name(self) -> str:
        return self.queue.name

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        return []

    def create_threads(self, sess, coord=None, daemon=False, start=False) -> list:
        del coord, daemon, start  # No threads: tf.data runs the pipelines.
        graph = self._graph_ref()
        if graph is not None:
            self._start(sess, graph)
        return []
