"""A TF1 training program in the style of the era (written for compat_input's tests):
CSV input through queues, tf.get_variable, v1 summaries merged and written by a
FileWriter, a seeded run. It prints each step's loss and the summary tags it wrote."""

import os
import sys
import tempfile

import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 6, "training steps")
flags.DEFINE_string("logdir", "", "where summaries go (a temporary directory if empty)")
FLAGS = flags.FLAGS


def write_data(root):
    path = os.path.join(root, "train.csv")
    with tf.gfile.GFile(path, "w") as f:
        for i in range(64):
            f.write("%d,%f\n" % (i, 0.5 * i + 1.0))
    return path


def inputs(path):
    queue = tf.train.string_input_producer([path], shuffle=False)
    reader = tf.TextLineReader()
    _, line = reader.read(queue)
    x, y = tf.decode_csv(line, [[0.0], [0.0]])
    return tf.train.batch([x, y], batch_size=8)


def main(_):
    tf.set_random_seed(7)
    root = FLAGS.logdir or tempfile.mkdtemp()
    x, y = inputs(write_data(root))
    w = tf.get_variable("w", [], initializer=tf.truncated_normal_initializer(seed=3))
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(w * x + b - y))
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("w", w)
    merged = tf.summary.merge_all()
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.001).minimize(loss, global_step=step)
    writer = tf.summary.FileWriter(os.path.join(root, "events"))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for i in range(FLAGS.steps):
            summary, value, _ = sess.run([merged, loss, train])
            writer.add_summary(summary, i)
            print("step %d loss %.4f" % (i, value))
        coord.request_stop()
        coord.join(threads)
    writer.close()
    tags = set()
    for event_file in tf.gfile.Glob(os.path.join(root, "events", "*")):
        for event in tf.train.summary_iterator(event_file):
            tags.update(v.tag for v in event.summary.value)
    print("summaries: %s" % ", ".join(sorted(tags)))
    sys.stdout.flush()


if __name__ == "__main__":
    tf.app.run()
