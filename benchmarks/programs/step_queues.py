"""Per-step overhead: a tiny model (batch 20, one matmul) trained on CSV rows read by
TextLineReader and batch; what is timed is training steps per second.

    python step_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 20

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
filename_queue = tf.train.string_input_producer(filenames)
_, line = tf.TextLineReader().read(filename_queue)
columns = tf.decode_csv(line, record_defaults=[[0.0]] * 10)
features, label = tf.train.batch([tf.stack(columns[1:]), columns[0]], batch_size=BATCH)
weights = tf.Variable(tf.zeros([9, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(features / 1000.0, weights)[:, 0] - label / 1000.0))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
build_s = time.perf_counter() - start

run_and_report(train_op, steps, BATCH, build_s)
