"""TF1 preloaded data: slice_input_producer over a constant and over a variable fed once.

Unmodified TF1 code: run it with `compat-input run examples/preloaded.py`.
"""
import numpy as np
import tensorflow as tf

images = np.arange(24, dtype=np.float32).reshape(12, 2)
labels = np.arange(12, dtype=np.int32) % 3

image, label = tf.train.slice_input_producer([tf.constant(images), tf.constant(labels)], num_epochs=2, shuffle=False)
image_batch, label_batch = tf.train.batch([image * 2.0, label], batch_size=5)

images_initializer = tf.placeholder(tf.float32, images.shape)
input_images = tf.Variable(images_initializer, trainable=False, collections=[])
var_image, = tf.train.slice_input_producer([input_images], num_epochs=1, shuffle=False)
var_batch = tf.train.batch([var_image], batch_size=4)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(input_images.initializer, feed_dict={images_initializer: images + 0.5})
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        step = 0
        while not coord.should_stop():
            ib, lb = sess.run([image_batch, label_batch])
            print("constant step %d labels %s first %s" % (step, lb.tolist(), ib[0].tolist()))
            step += 1
    except tf.errors.OutOfRangeError:
        print("constant input done")
    try:
        while True:
            print("variable batch %s" % sess.run(var_batch)[:, 0].tolist())
    except tf.errors.OutOfRangeError:
        print("variable input done")
    coord.request_stop()
    coord.join(threads)
