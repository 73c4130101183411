"""A small residual network in the style of tensorflow/models' resnet_model (3x3 convolutions,
residual units, global average pooling, softmax cross entropy on one-hot labels), shared by
the trainer and its tf.data twin. Small, so that 2 CPU cores train it at a few steps/s."""
import tensorflow as tf


def _conv(name, x, filters):
    with tf.variable_scope(name):
        kernel = tf.get_variable(
            "DW", [3, 3, x.shape[3].value, filters],
            initializer=tf.random_normal_initializer(stddev=(2.0 / (9 * filters)) ** 0.5))
        return tf.nn.conv2d(x, kernel, [1, 1, 1, 1], "SAME")


def _residual(name, x):
    with tf.variable_scope(name):
        y = _conv("conv1", tf.nn.relu(x), 16)
        y = _conv("conv2", tf.nn.relu(y), 16)
        return x + y


def loss_of(images, one_hot_labels):
    x = _conv("init", images, 16)
    for i in range(2):
        x = _residual(f"unit_{i}", x)
    x = tf.reduce_mean(tf.nn.relu(x), [1, 2])
    with tf.variable_scope("logit"):
        w = tf.get_variable("DW", [16, 10], initializer=tf.uniform_unit_scaling_initializer(1.0))
        b = tf.get_variable("biases", [10], initializer=tf.constant_initializer())
        logits = tf.nn.xw_plus_b(x, w, b)
    xent = tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=one_hot_labels)
    return tf.reduce_mean(xent)
