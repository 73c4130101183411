"""TF1 hand-built queue: a RandomShuffleQueue filled by a QueueRunner from a reader.

Unmodified TF1 code: run it with `compat-input run examples/simple_shuffle_batch.py`. The
queue is the user's own (it stays a real queue); the file names and records it is filled
from come from compat_input.
"""
import os
import tempfile

import tensorflow as tf

data_dir = tempfile.mkdtemp()
path = os.path.join(data_dir, "numbers.txt")
with open(path, "w") as f:
    f.write("".join("%d\n" % i for i in range(40)))


def simple_shuffle_batch(source, capacity, batch_size=10):
    queue = tf.RandomShuffleQueue(capacity=capacity, min_after_dequeue=int(0.9 * capacity),
                                  shapes=source.shape, dtypes=source.dtype)
    enqueue = queue.enqueue(source)
    num_threads = 4
    qr = tf.train.QueueRunner(queue, [enqueue] * num_threads)
    tf.train.add_queue_runner(qr)
    return queue.dequeue_up_to(batch_size)


filename_queue = tf.train.string_input_producer([path], num_epochs=1, shuffle=False)
_, line = tf.TextLineReader().read(filename_queue)
number = tf.string_to_number(line, out_type=tf.int32)
batch = simple_shuffle_batch(number, capacity=20)

with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    seen = []
    try:
        while True:
            seen.extend(sess.run(batch).tolist())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
print("got %d numbers, sum %d, sorted ok %s" % (len(seen), sum(seen), sorted(seen) == list(range(40))))
