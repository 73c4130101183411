"""A TF1 GAN-style program in the style of the era (written for compat_input's tests):
TFRecord input parsed with parse_single_example, generator and discriminator in
variable scopes, two optimizers over their own var_lists, alternating steps."""

import os
import tempfile

import numpy as np
import tensorflow as tf


def write_records(path):
    writer = tf.python_io.TFRecordWriter(path)
    rng = np.random.RandomState(0)
    for _ in range(128):
        value = rng.normal(3.0, 0.5, size=[4]).astype(np.float32)
        feature = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=value))}
        writer.write(
            tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
        )
    writer.close()


def real_batch(path):
    queue = tf.train.string_input_producer([path], shuffle=False)
    _, serialized = tf.TFRecordReader().read(queue)
    parsed = tf.parse_single_example(serialized, {"x": tf.FixedLenFeature([4], tf.float32)})
    return tf.train.batch([parsed["x"]], batch_size=16, num_threads=1)


def generator(z):
    with tf.variable_scope("generator"):
        w = tf.get_variable("w", [2, 4], initializer=tf.constant_initializer(0.3))
        return tf.matmul(z, w)


def discriminator(x, reuse):
    with tf.variable_scope("discriminator", reuse=reuse):
        w = tf.get_variable("w", [4, 1], initializer=tf.constant_initializer(0.2))
        return tf.matmul(x, w)


def main():
    path = os.path.join(tempfile.mkdtemp(), "real.tfrecord")
    write_records(path)
    real = real_batch(path)
    z = tf.constant(np.linspace(-1, 1, 32, dtype=np.float32).reshape(16, 2))
    fake = generator(z)
    d_real, d_fake = discriminator(real, False), discriminator(fake, True)
    ones, zeros = tf.ones_like(d_real), tf.zeros_like(d_fake)
    d_loss = tf.reduce_mean(
        tf.nn.sigmoid_cross_entropy_with_logits(labels=ones, logits=d_real)
    ) + tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=zeros, logits=d_fake))
    g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=ones, logits=d_fake))
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "discriminator")
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "generator")
    d_step = tf.train.AdamOptimizer(0.01).minimize(d_loss, var_list=d_vars)
    g_step = tf.train.AdamOptimizer(0.01).minimize(g_loss, var_list=g_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for i in range(6):
            _, dl = sess.run([d_step, d_loss])
            _, gl = sess.run([g_step, g_loss])
            print("step %d d_loss %.5f g_loss %.5f" % (i, dl, gl))
        coord.request_stop()
        coord.join(threads)


if __name__ == "__main__":
    main()
