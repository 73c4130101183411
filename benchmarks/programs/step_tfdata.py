"""step_queues.py written by hand in tf.data.

    python step_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 20
AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(lines):
    columns = tf.decode_csv(lines, record_defaults=[[0.0]] * 10)
    return tf.stack(columns[1:], axis=-1), columns[0]


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
lines = tf.data.TextLineDataset(filenames).repeat()
dataset = lines.batch(BATCH, drop_remainder=True).map(parse, AUTOTUNE)
features, label = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
weights = tf.Variable(tf.zeros([9, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(features / 1000.0, weights)[:, 0] - label / 1000.0))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
build_s = time.perf_counter() - start

run_and_report(train_op, steps, BATCH, build_s)
