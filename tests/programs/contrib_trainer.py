"""A TF1 trainer that reaches tf.contrib as the CIFAR-10 tutorial and slim scripts did: the
global step from tf.contrib.framework, layers and arg_scope from tf.contrib.slim, the loss
from tf.contrib.seq2seq. Seeded, one reader thread: it prints the same numbers every run.

    python contrib_trainer.py
"""

import tensorflow as tf
import tensorflow.contrib.slim as slim
from tensorflow.contrib import framework

tf.set_random_seed(7)
index = tf.train.range_input_producer(40, num_epochs=1, shuffle=False).dequeue()
features = tf.cast(tf.stack([index, index * 2, index % 3]), tf.float32) / 10.0
label = tf.cast(index % 4, tf.int32)
batch, labels = tf.train.batch([features, label], batch_size=8)
with framework.arg_scope([slim.fully_connected], activation_fn=tf.nn.relu):
    hidden = slim.fully_connected(batch, 6)
logits = slim.fully_connected(hidden, 4, activation_fn=None)
loss = tf.contrib.seq2seq.sequence_loss(
    tf.expand_dims(logits, 1), tf.expand_dims(labels, 1), tf.ones([8, 1])
)
step = tf.contrib.framework.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            _, value, at = sess.run([train, loss, step])
            print(at, f"{value:.6f}")
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
