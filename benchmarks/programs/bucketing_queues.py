"""Length bucketing, as seq2seq and speech trainers batch: lines of token ids read by
TextLineReader, split and parsed, batched by tf.contrib.training.bucket_by_sequence_length
with dynamic padding.

    python bucketing_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 32

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "tokens*.txt")))
filename_queue = tf.train.string_input_producer(filenames)
_, line = tf.TextLineReader().read(filename_queue)
ids = tf.string_to_number(tf.string_split([line]).values, tf.int32)
lengths, (tokens,) = tf.contrib.training.bucket_by_sequence_length(
    tf.size(ids), [ids], batch_size=BATCH, bucket_boundaries=[10, 20, 30], dynamic_pad=True
)
build_s = time.perf_counter() - start

run_and_report([lengths, tokens], steps, BATCH, build_s)
