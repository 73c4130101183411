"""Supervisor: the legacy training supervisor, with the input position in its checkpoints.

`compat_input.Supervisor` is TensorFlow's `tf.compat.v1.train.Supervisor` (session
creation, restore from the latest checkpoint or init, local init, checkpoint and summary
services, OutOfRangeError as a clean stop) with these changes:

- its default Saver also saves every pipeline's position (checkpoint.py), so a restart
  resumes the input where the checkpoint was taken instead of at the start;
- pipelines start before the checkpoint service writes its first checkpoint, whose
  positions are the start, however far the first steps ran (first_checkpoint.py);
- its graph files are written by a thread of their own (graph_files.py), done before
  `stop()` returns.

A checkpoint written without positions (by legacy code, or with position saving off)
restores through its default Saver, a `restoring.Saver`, with no patch to
TensorFlow: the input then starts from the beginning. (Any other Saver restores one after
`compat_input.install()`.)
"""

import tensorflow as tf

from compat_input._src.core import tf_internals
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import first_checkpoint
from compat_input._src.runtime import graph_files
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import restoring

tf1 = tf.compat.v1


class Supervisor(tf1.train.Supervisor):
    """Drop-in replacement for `tf.compat.v1.train.Supervisor`.

    Differences: checkpoints hold the input position of every compat_input pipeline, so a
    restart resumes the input where the checkpoint was taken (legacy restarted it from the
    beginning), except the checkpoint service's first, taken as training starts, whose
    positions are the start (first_checkpoint.py); checkpoints without positions restore
    too; compat_input pipelines start before the first checkpoint is written; its graph
    files (`logdir/graph.pbtxt`, the event file's graph) are written by a thread of their
    own while the program starts, there once `stop()` returns or the program exits (an
    error writing them is raised by `stop()`).
    """

    def __init__(self, graph=None, *args, **kwargs):
        # TensorFlow's Supervisor writes the graph to its event file and finalizes it here:
        # the ops that start the pipelines must be in it already.
        pipeline_lib.make_start_ops(graph or tf1.get_default_graph())
        with tf_internals.our_deprecated_calls():  # The program's call warns, not ours.
            super().__init__(graph, *args, **kwargs)

    def _write_graph(self):
        # As TensorFlow's, in a thread of its own (graph_files.py); the graph is finalized.
        summary = self._summary_writer and not self._graph_added_to_summary
        logdir, writer, graph = self._logdir, self._summary_writer, self._graph
        meta_graph_def = self._meta_graph_def

        def write():
            if logdir:
                graph_files.write_pbtxt(graph, logdir)
            if summary:
                writer.add_graph(graph)
                writer.add_meta_graph(meta_graph_def)

        if logdir or summary:
            graph_files.start(self, write)
        self._graph_added_to_summary = self._graph_added_to_summary or bool(summary)

    def stop(self, *args, **kwargs):
        # The graph is written before the summary writer closes.
        stop = super().stop
        return graph_files.after_writes(self, lambda: stop(*args, **kwargs))

    def start_standard_services(self, sess):
        # Start the pipelines first: the checkpoint service saves their positions at once.
        # That first save races the first steps: it holds the input's start.
        first = self.saver is not None and self._save_model_secs and self._positions_saved()
        marks = [first_checkpoint.starting(self._graph)] if first else []
        pipeline_lib.start_pipelines(sess, also=marks)
        if marks:  # Not run by the start (nothing to start): a run of its own.
            sess.run(marks)
        return super().start_standard_services(sess)

    def _positions_saved(self) -> bool:
        return bool(checkpoint.positions(self.saver))

    def _init_saver(self, saver=tf1.train.Supervisor.USE_DEFAULT):
        # TensorFlow's Supervisor makes its default Saver here (private to it, TF 2.21); ours
        # is made the same way, and restores checkpoints written without positions too.
        if saver is self.USE_DEFAULT:
            saver = self._get_first_op_from_collection(tf1.GraphKeys.SAVERS)
            if saver is None and tf1.global_variables():
                saver = restoring.Saver()
                tf1.add_to_collection(tf1.GraphKeys.SAVERS, saver)
        super()._init_saver(saver)
