"""text_join_queues.py written by hand in tf.data: four files read at once, each line split
and padded in a parallel map, shuffled and batched.

    python text_join_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 64
READERS = 4
LENGTH = 24
AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(line):
    words = tf.string_split([line]).values
    ids = tf.string_to_number(words, tf.int32)
    return tf.reshape(tf.pad(ids, [[0, LENGTH]])[:LENGTH], [LENGTH]), tf.size(words)


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "tokens*.txt")))
lines = tf.data.Dataset.from_tensor_slices(filenames).repeat()
lines = lines.interleave(tf.data.TextLineDataset, cycle_length=READERS)
dataset = lines.map(parse, AUTOTUNE).shuffle(1000).batch(BATCH).prefetch(AUTOTUNE)
ids, lengths = tf.data.make_one_shot_iterator(dataset).get_next()
build_s = time.perf_counter() - start

run_and_report([ids, lengths], steps, BATCH, build_s)
