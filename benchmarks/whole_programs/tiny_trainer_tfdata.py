"""tiny_trainer.py with its input written by hand in tf.data (the same model and loop).

    python tiny_trainer_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: seeded)
"""
import glob
import os
import sys

import tensorflow as tf

from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 20
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()


def parse(lines):
    columns = tf.decode_csv(lines, record_defaults=[[0.0]] * 10)
    return tf.stack(columns[1:], axis=-1), columns[0]


filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
lines = tf.data.TextLineDataset(filenames).repeat()
dataset = lines.batch(BATCH, drop_remainder=True).map(parse, AUTOTUNE).prefetch(AUTOTUNE)
features, label = tf.data.make_one_shot_iterator(dataset).get_next()
weights = tf.get_variable("w", [9, 1], initializer=tf.glorot_uniform_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(features / 1000.0, weights)[:, 0] - label / 1000.0))
train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
train([train_op, loss], steps, BATCH)
