"""CSV rows through a queue built in the order of TensorFlow's threading guide (and CS 20SI's
queue example): the example, a RandomShuffleQueue and its enqueue op, the dequeue_many the
model reads, and only then the QueueRunner (2 threads) that fills it.

    python guide_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
_, line = tf.TextLineReader().read(tf.train.string_input_producer(filenames))
columns = tf.decode_csv(line, record_defaults=[[0]] * 10)
example = [tf.stack(columns[1:]), columns[0]]
queue = tf.RandomShuffleQueue(capacity=1000 + 3 * BATCH, min_after_dequeue=1000,
                              dtypes=[tf.int32, tf.int32], shapes=[[9], []])
enqueue_op = queue.enqueue(example)
features_batch, label_batch = queue.dequeue_many(BATCH)
qr = tf.train.QueueRunner(queue, [enqueue_op] * 2)
tf.train.add_queue_runner(qr)
build_s = time.perf_counter() - start

run_and_report([features_batch, label_batch], steps, BATCH, build_s)
