"""TF1 input through a queue the program builds itself (CIFAR-style binary records).

Unmodified TF1 code, in the style of resnet's and CIFAR-10's input: fixed-length records
(a label byte, then a 4x4x3 image, depth-major), a per-example graph, a queue chosen by
the mode (resnet's RandomShuffleQueue to train, a FIFOQueue to evaluate) filled by the
program's own QueueRunner, and `dequeue_many`. Run it with `compat-input run
examples/cifar_queue.py`; `compat-input migrate --to-tfdata` turns its input into plain
tf.data.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

IMAGE, DEPTH, BATCH = 4, 3, 6
MODE = "eval"  # "train" shuffles, on two threads: its order changes from run to run
image_bytes = IMAGE * IMAGE * DEPTH
record_bytes = 1 + image_bytes

data_dir = tempfile.mkdtemp()
files = []
for shard in range(2):
    path = os.path.join(data_dir, "data_batch_%d.bin" % shard)
    rng = np.random.RandomState(shard)
    with open(path, "wb") as f:
        for i in range(10):
            f.write(bytes([(shard * 10 + i) % 7]))
            f.write(rng.randint(0, 256, image_bytes).astype(np.uint8).tobytes())
    files.append(path)

file_queue = tf.train.string_input_producer(files, num_epochs=2, shuffle=False)
reader = tf.FixedLengthRecordReader(record_bytes=record_bytes)
_, value = reader.read(file_queue)
record = tf.reshape(tf.decode_raw(value, tf.uint8), [record_bytes])
label = tf.cast(tf.slice(record, [0], [1]), tf.int32)
depth_major = tf.reshape(tf.slice(record, [1], [image_bytes]), [DEPTH, IMAGE, IMAGE])
image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
image = tf.image.per_image_standardization(image)

if MODE == "train":
    image = tf.image.random_flip_left_right(image)
    example_queue = tf.RandomShuffleQueue(capacity=4 * BATCH, min_after_dequeue=2 * BATCH,
                                          dtypes=[tf.float32, tf.int32],
                                          shapes=[[IMAGE, IMAGE, DEPTH], [1]])
    num_threads = 2
else:
    example_queue = tf.FIFOQueue(3 * BATCH, dtypes=[tf.float32, tf.int32],
                                 shapes=[[IMAGE, IMAGE, DEPTH], [1]])
    num_threads = 1
example_enqueue_op = example_queue.enqueue([image, label])
tf.train.add_queue_runner(tf.train.queue_runner.QueueRunner(
    example_queue, [example_enqueue_op] * num_threads))
images, labels = example_queue.dequeue_many(BATCH)
one_hot = tf.one_hot(tf.reshape(labels, [BATCH]), 7)

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    weights = np.arange(image_bytes).reshape(IMAGE, IMAGE, DEPTH)
    step = 0
    try:
        while not coord.should_stop():
            batch, hot = sess.run([images, one_hot])
            print("step %d: labels %s, images %s, checksums %s" % (
                step, hot.argmax(1).tolist(), list(batch.shape),
                [round(float((b * weights).sum()), 3) for b in batch]))
            step += 1
    except tf.errors.OutOfRangeError:
        print("end of input after %d batches (%d examples, whole batches only)" % (
            step, step * BATCH))
    finally:
        coord.request_stop()
    coord.join(threads)
