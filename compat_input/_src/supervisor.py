"""Supervisor: the legacy training supervisor, with the input position in its checkpoints.

`compat_input.Supervisor` is TensorFlow's `tf.compat.v1.train.Supervisor` (session
creation, restore from the latest checkpoint or init, local init, checkpoint and summary
services, OutOfRangeError as a clean stop) with two changes for compat_input pipelines:

- its default Saver also saves every pipeline's position (checkpoint.py), so a restart
  resumes the input where the checkpoint was taken instead of at the start;
- pipelines start before the checkpoint service writes its first checkpoint.

A checkpoint written without positions (by legacy code, or with position saving off)
restores through any Saver (checkpoint.py): the input then starts from the beginning.
"""

import tensorflow as tf

from compat_input._src import pipeline as pipeline_lib

tf1 = tf.compat.v1


class Supervisor(tf1.train.Supervisor):
    """Drop-in replacement for `tf.compat.v1.train.Supervisor`.

    Differences: checkpoints hold the input position of every compat_input pipeline, so a
    restart resumes the input where the checkpoint was taken (legacy restarted it from the
    beginning); checkpoints without positions restore too; compat_input pipelines start
    before the first checkpoint is written.
    """

    def start_standard_services(self, sess):
        # Start the pipelines first: the checkpoint service saves their positions at once.
        pipeline_lib.start_pipelines(sess)
        return super().start_standard_services(sess)
