"""A trainer with a tiny model (batch 20, one matmul) on CSV rows read by TextLineReader
and batch: its steps cost little besides the input's per-step overhead.

    python tiny_trainer.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
"""
import glob
import os
import sys

import tensorflow as tf

from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 20
maybe_seed()

filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
filename_queue = tf.train.string_input_producer(filenames)
_, line = tf.TextLineReader().read(filename_queue)
columns = tf.decode_csv(line, record_defaults=[[0.0]] * 10)
features, label = tf.train.batch([tf.stack(columns[1:]), columns[0]], batch_size=BATCH)
weights = tf.get_variable("w", [9, 1], initializer=tf.glorot_uniform_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(features / 1000.0, weights)[:, 0] - label / 1000.0))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
train([train_op, loss], steps, BATCH)
