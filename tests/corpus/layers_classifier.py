"""A TF1 classifier built on tf.layers, in the style of the era (written for compat_input's
tests): CSV rows through queues, dense layers with dropout off at eval, summaries, a
seeded run. On TensorFlow 2 it needs Keras 2: TF_USE_LEGACY_KERAS=1 with tf_keras."""

import os
import tempfile

import tensorflow as tf


def write_rows(path):
    with open(path, "w") as f:
        for i in range(96):
            a, b = (i % 12) / 12.0, (i % 7) / 7.0
            f.write("%f,%f,%d\n" % (a, b, int(a + b > 1.0)))


def inputs(path, batch_size):
    queue = tf.train.string_input_producer([path], shuffle=False)
    _, line = tf.TextLineReader().read(queue)
    a, b, label = tf.decode_csv(line, [[0.0], [0.0], [0]])
    return tf.train.batch([tf.stack([a, b]), label], batch_size=batch_size)


def main():
    tf.set_random_seed(11)
    path = os.path.join(tempfile.mkdtemp(), "rows.csv")
    write_rows(path)
    features, labels = inputs(path, 12)
    training = tf.placeholder_with_default(True, [])
    hidden = tf.layers.dense(
        features, 8, activation=tf.nn.relu, kernel_initializer=tf.glorot_uniform_initializer(seed=1)
    )
    hidden = tf.layers.dropout(hidden, rate=0.0, training=training)
    logits = tf.layers.dense(hidden, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.reduce_mean(
        tf.cast(tf.equal(tf.argmax(logits, 1), tf.cast(labels, tf.int64)), tf.float32)
    )
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        for step in range(8):
            _, value, summary = sess.run([train, loss, merged])
            print("step %d loss %.5f summary written: %s" % (step, value, len(summary) > 0))
        print("accuracy %.4f" % sess.run(accuracy, {training: False}))
        coord.request_stop()
        coord.join(threads)


if __name__ == "__main__":
    main()
