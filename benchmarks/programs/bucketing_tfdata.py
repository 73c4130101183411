"""bucketing_queues.py written by hand in tf.data: the same buckets with tf.data's own
bucket_by_sequence_length.

    python bucketing_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 32
AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(line):
    ids = tf.string_to_number(tf.string_split([line]).values, tf.int32)
    return tf.size(ids), ids


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "tokens*.txt")))
lines = tf.data.Dataset.from_tensor_slices(filenames).repeat().flat_map(tf.data.TextLineDataset)
dataset = lines.map(parse, AUTOTUNE).bucket_by_sequence_length(
    lambda length, ids: length, [10, 20, 30], [BATCH] * 4, drop_remainder=True
)
lengths, tokens = tf.data.make_one_shot_iterator(dataset.prefetch(AUTOTUNE)).get_next()
build_s = time.perf_counter() - start

run_and_report([lengths, tokens], steps, BATCH, build_s)
