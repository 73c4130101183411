"""The CIFAR-10 tutorial's model (cifar10.inference and cifar10.loss), shared by the
trainer and its tf.data twin as the tutorial's cifar10.py was shared."""
import tensorflow as tf


def variable(name, shape, stddev, wd):
    var = tf.get_variable(name, shape, initializer=tf.truncated_normal_initializer(stddev=stddev))
    if wd:
        tf.add_to_collection("losses", tf.multiply(tf.nn.l2_loss(var), wd))
    return var


def inference(images, batch):
    with tf.variable_scope("conv1"):
        kernel = variable("weights", [5, 5, 3, 64], 5e-2, 0.0)
        bias = tf.get_variable("biases", [64], initializer=tf.constant_initializer(0.0))
        conv1 = tf.nn.relu(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], "SAME") + bias)
    pool1 = tf.nn.max_pool(conv1, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    with tf.variable_scope("conv2"):
        kernel = variable("weights", [5, 5, 64, 64], 5e-2, 0.0)
        bias = tf.get_variable("biases", [64], initializer=tf.constant_initializer(0.1))
        conv2 = tf.nn.relu(tf.nn.conv2d(norm1, kernel, [1, 1, 1, 1], "SAME") + bias)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    pool2 = tf.nn.max_pool(norm2, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    with tf.variable_scope("local3"):
        flat = tf.reshape(pool2, [batch, -1])
        weights = variable("weights", [flat.shape[1].value, 384], 0.04, 0.004)
        bias = tf.get_variable("biases", [384], initializer=tf.constant_initializer(0.1))
        local3 = tf.nn.relu(tf.matmul(flat, weights) + bias)
    with tf.variable_scope("local4"):
        weights = variable("weights", [384, 192], 0.04, 0.004)
        bias = tf.get_variable("biases", [192], initializer=tf.constant_initializer(0.1))
        local4 = tf.nn.relu(tf.matmul(local3, weights) + bias)
    with tf.variable_scope("softmax_linear"):
        weights = variable("weights", [192, 10], 1 / 192.0, 0.0)
        bias = tf.get_variable("biases", [10], initializer=tf.constant_initializer(0.0))
        return tf.matmul(local4, weights) + bias


def loss_of(images, labels, batch):
    logits = inference(images, batch)
    cross_entropy = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.cast(labels, tf.int64), logits=logits))
    tf.add_to_collection("losses", cross_entropy)
    return tf.add_n(tf.get_collection("losses"))
