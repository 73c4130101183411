"""Supervisor: the legacy training supervisor, with the input position in its checkpoints.

`compat_input.Supervisor` is TensorFlow's `tf.compat.v1.train.Supervisor` (session
creation, restore from the latest checkpoint or init, local init, checkpoint and summary
services, OutOfRangeError as a clean stop) with two changes for compat_input pipelines:

- its default Saver also saves every pipeline's position (checkpoint.py), so a restart
  resumes the input where the checkpoint was taken instead of at the start;
- pipelines start before the checkpoint service writes its first checkpoint;
- `graph.pbtxt` is written by a thread of its own, done before `stop()` returns.

A checkpoint written without positions (by legacy code, or with position saving off)
restores through its default Saver, a `checkpoint.Saver`, with no patch to
TensorFlow: the input then starts from the beginning. (Any other Saver restores one after
`compat_input.install()`.)
"""

import threading

import tensorflow as tf

from compat_input._src.core import tf_internals
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1


class Supervisor(tf1.train.Supervisor):
    """Drop-in replacement for `tf.compat.v1.train.Supervisor`.

    Differences: checkpoints hold the input position of every compat_input pipeline, so a
    restart resumes the input where the checkpoint was taken (legacy restarted it from the
    beginning); checkpoints without positions restore too; compat_input pipelines start
    before the first checkpoint is written; `logdir/graph.pbtxt` is written by a thread of
    its own while the program starts (there by the time `stop()` returns, or the program
    exits; an error writing it is raised by `stop()`).
    """

    def __init__(self, graph=None, *args, **kwargs):
        # TensorFlow's Supervisor writes the graph to its event file and finalizes it here:
        # the ops that start the pipelines must be in it already.
        pipeline_lib.make_start_ops(graph or tf1.get_default_graph())
        with tf_internals.our_deprecated_calls():  # The program's call warns, not ours.
            super().__init__(graph, *args, **kwargs)

    def _write_graph(self):
        # TensorFlow writes the graph (graph.pbtxt, a text proto formatted in Python, and
        # the event file's GraphDef) in the thread that starts the session, before its first
        # step, tf.data functions included: 130 ms of the youtube-8m-shaped trainer's start
        # (legacy's graph: 60). A thread of its own overlaps it with the start and the first
        # step. The graph is finalized: what it writes is the graph as it is now.
        summary = self._summary_writer and not self._graph_added_to_summary
        if self._logdir or summary:
            self._graph_writer = _GraphWriter(self, summary)
        self._graph_added_to_summary = self._graph_added_to_summary or bool(summary)

    def stop(self, *args, **kwargs):
        # The graph is written before the summary writer closes.
        writer, self._graph_writer = getattr(self, "_graph_writer", None), None
        error = writer.finished() if writer is not None else None
        stopped = super().stop(*args, **kwargs)
        if error is not None:
            raise error
        return stopped

    def start_standard_services(self, sess):
        # Start the pipelines first: the checkpoint service saves their positions at once.
        pipeline_lib.start_pipelines(sess)
        return super().start_standard_services(sess)

    def _init_saver(self, saver=tf1.train.Supervisor.USE_DEFAULT):
        # TensorFlow's Supervisor makes its default Saver here (private to it, TF 2.21); ours
        # is made the same way, and restores checkpoints written without positions too.
        if saver is self.USE_DEFAULT:
            saver = self._get_first_op_from_collection(tf1.GraphKeys.SAVERS)
            if saver is None and tf1.global_variables():
                saver = checkpoint.Saver()
                tf1.add_to_collection(tf1.GraphKeys.SAVERS, saver)
        super()._init_saver(saver)


class _GraphWriter(threading.Thread):
    """Writes a Supervisor's graph as TensorFlow's `_write_graph` does, keeping its error
    for `stop()`. Not a daemon: the interpreter's exit waits for the files, which legacy's program
    had written before its first step."""

    def __init__(self, supervisor, summary: bool):
        super().__init__(name="compat_input_write_graph")
        self._supervisor, self._summary = supervisor, summary
        self._error = None
        self.start()

    def run(self) -> None:
        sv = self._supervisor
        try:
            if sv._logdir:
                graph_def = sv._graph.as_graph_def(add_shapes=True)
                tf1.train.write_graph(graph_def, sv._logdir, "graph.pbtxt")
            if self._summary:
                sv._summary_writer.add_graph(sv._graph)
                sv._summary_writer.add_meta_graph(sv._meta_graph_def)
        except Exception as error:  # noqa: BLE001 - raised again by stop().
            self._error = error

    def finished(self):
        """Waits for the writes; the error one raised, or None."""
        self.join()
        return self._error
