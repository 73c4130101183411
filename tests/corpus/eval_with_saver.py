"""A TF1 train-then-evaluate program in the style of the era (written for compat_input's
tests): in-memory data sliced by slice_input_producer, a Saver checkpoint, then a new
graph that restores it and evaluates one whole epoch, the last batch smaller."""

import os
import tempfile

import numpy as np
import tensorflow as tf

FEATURES = np.arange(90, dtype=np.float32).reshape(45, 2) / 45.0
LABELS = (FEATURES.sum(axis=1) > 1.0).astype(np.int64)


def model(x):
    with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
        w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer(0.1))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        return tf.matmul(x, w) + b


def train(checkpoint):
    with tf.Graph().as_default():
        x, y = tf.train.slice_input_producer([FEATURES, LABELS], shuffle=False)
        xs, ys = tf.train.batch([x, y], batch_size=9)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=model(xs))
        )
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            for i in range(8):
                _, value = sess.run([step, loss])
                print("train step %d loss %.5f" % (i, value))
            saver.save(sess, checkpoint)
            coord.request_stop()
            coord.join(threads)


def evaluate(checkpoint):
    with tf.Graph().as_default():
        x, y = tf.train.slice_input_producer([FEATURES, LABELS], num_epochs=1, shuffle=False)
        xs, ys = tf.train.batch([x, y], batch_size=10, allow_smaller_final_batch=True)
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(model(xs), 1), ys), tf.int32))
        saver = tf.train.Saver(tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            saver.restore(sess, checkpoint)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            total, right = 0, 0
            try:
                while not coord.should_stop():
                    n, c = sess.run([tf.shape(ys)[0], correct])
                    total, right = total + n, right + c
                    print("eval batch of %d, %d right" % (n, c))
            except tf.errors.OutOfRangeError:
                print("eval: %d of %d right" % (right, total))
            finally:
                coord.request_stop()
            coord.join(threads)


if __name__ == "__main__":
    checkpoint = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    train(checkpoint)
    evaluate(checkpoint)
