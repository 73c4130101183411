"""Supervisor: the legacy training supervisor, with the input position in its checkpoints.

`compat_input.Supervisor` is TensorFlow's `tf.compat.v1.train.Supervisor` (session
creation, restore from the latest checkpoint or init, local init, checkpoint and summary
services, OutOfRangeError as a clean stop) with two changes for compat_input pipelines:

- its default Saver also saves every pipeline's position (checkpoint.py), so a restart
  resumes the input where the checkpoint was taken instead of at the start;
- a checkpoint written without positions (by legacy code, or with position saving off)
  still restores: the variables are restored and the input starts from the beginning.
"""

import tensorflow as tf

from compat_input._src import checkpoint
from compat_input._src import pipeline as pipeline_lib

tf1 = tf.compat.v1


class _PositionTolerantSaver(tf1.train.Saver):
    """A Saver whose restore falls back to the variables alone when positions are missing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        saveables = tf1.get_collection(tf1.GraphKeys.SAVEABLE_OBJECTS)
        without = [s for s in saveables if not checkpoint.is_position(s)]
        # Built now: the Supervisor finalizes the graph before the first restore.
        self._fallback = None
        if len(without) != len(saveables):
            self._fallback = tf1.train.Saver(
                var_list=tf1.global_variables() + without, max_to_keep=None
            )

    def restore(self, sess, save_path):
        try:
            return super().restore(sess, save_path)
        except tf.errors.NotFoundError:
            if self._fallback is None:
                raise
            names = tf.train.load_checkpoint(save_path).get_variable_to_shape_map()
            if any(name.startswith("compat_input/") for name in names):
                raise  # Positions are there: something else is missing.
            checkpoint.logger.warning(
                "compat_input: checkpoint %s holds no input positions; variables are restored "
                "and the input starts from the beginning.",
                save_path,
            )
            return self._fallback.restore(sess, save_path)


class Supervisor(tf1.train.Supervisor):
    """Drop-in replacement for `tf.compat.v1.train.Supervisor`.

    Differences: checkpoints hold the input position of every compat_input pipeline, so a
    restart resumes the input where the checkpoint was taken (legacy restarted it from the
    beginning); checkpoints without positions restore too; compat_input pipelines start
    before the first checkpoint is written.
    """

    def _init_saver(self, saver=tf1.train.Supervisor.USE_DEFAULT):
        if saver is tf1.train.Supervisor.USE_DEFAULT:
            saver = self._get_first_op_from_collection(tf1.GraphKeys.SAVERS)
            if saver is None and tf1.global_variables():
                saver = _PositionTolerantSaver()
                tf1.add_to_collection(tf1.GraphKeys.SAVERS, saver)
        self._saver = saver

    def start_standard_services(self, sess):
        # Start the pipelines first: the checkpoint service saves their positions at once.
        pipeline_lib.start_pipelines(sess)
        return super().start_standard_services(sess)
