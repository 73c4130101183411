"""CSV rows: string_input_producer + TextLineReader + decode_csv + shuffle_batch (2 threads).

    python csv_queues.py DATA_DIR STEPS
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
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.TextLineReader()
_, line = reader.read(filename_queue)
columns = tf.decode_csv(line, record_defaults=[[0]] * 10)
features = tf.stack(columns[1:])
label = columns[0]
features_batch, label_batch = tf.train.shuffle_batch(
    [features, label], batch_size=BATCH, capacity=1000 + 3 * BATCH, min_after_dequeue=1000,
    num_threads=2)
build_s = time.perf_counter() - start

run_and_report([features_batch, label_batch], steps, BATCH, build_s)
