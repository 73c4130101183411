"""csv_queues.py written by hand in tf.data (what a migration would write): whole batches of
lines parsed at once, since decode_csv is a batch op.

    python csv_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128
AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(lines):
    columns = tf.decode_csv(lines, record_defaults=[[0]] * 10)
    return tf.stack(columns[1:], axis=-1), columns[0]


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "part*.csv")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
lines = files.interleave(tf.data.TextLineDataset, cycle_length=2, num_parallel_calls=AUTOTUNE)
dataset = lines.shuffle(1000 + BATCH).batch(BATCH, drop_remainder=True).map(parse, AUTOTUNE)
features_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([features_batch, label_batch], steps, BATCH, build_s)
