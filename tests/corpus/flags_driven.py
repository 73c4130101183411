"""A flags-driven TF1 program in the style of the era (written for compat_input's tests):
tf.app.flags and tf.app.run, tf.logging, tf.gfile, fixed-length binary records decoded
with decode_raw, MonitoredTrainingSession with a StopAtStepHook."""

import os
import tempfile

import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("batch_size", 5, "examples per batch")
flags.DEFINE_integer("max_steps", 4, "steps to train")
flags.DEFINE_string("data_dir", "", "where the records are written (temporary if empty)")
FLAGS = flags.FLAGS
RECORD = 3 * 4  # Three little-endian int32 values.


def write_data(data_dir):
    tf.gfile.MakeDirs(data_dir)
    path = os.path.join(data_dir, "data.bin")
    with tf.gfile.GFile(path, "wb") as f:
        f.write(np.arange(3 * 40, dtype="<i4").tobytes())
    return path


def main(_):
    tf.logging.set_verbosity(tf.logging.ERROR)
    data_dir = FLAGS.data_dir or tempfile.mkdtemp()
    path = write_data(data_dir)
    tf.logging.info("reading %s", path)
    queue = tf.train.string_input_producer([path], shuffle=False)
    _, raw = tf.FixedLengthRecordReader(record_bytes=RECORD).read(queue)
    record = tf.reshape(tf.decode_raw(raw, tf.int32), [3])
    batch = tf.train.batch([record], batch_size=FLAGS.batch_size)
    step = tf.train.get_or_create_global_step()
    total = tf.reduce_sum(batch)
    first = batch[0, 0]
    advance = tf.assign_add(step, 1)
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.max_steps)]
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=os.path.join(data_dir, "ckpt"), hooks=hooks, save_summaries_steps=None
    ) as sess:
        while not sess.should_stop():
            value, head, done = sess.run([total, first, advance])
            print("step %d first %d sum %d" % (done, head, value))


if __name__ == "__main__":
    tf.app.run()
