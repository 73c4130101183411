"""Text read by several readers at once, as language-model and classifier inputs read it:
four TextLineReaders over one filename queue, each line split into token ids, cut or padded
to a fixed length, into shuffle_batch_join.

    python text_join_queues.py DATA_DIR STEPS
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

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "tokens*.txt")))
filename_queue = tf.train.string_input_producer(filenames)
examples = []
for _ in range(READERS):
    _, line = tf.TextLineReader().read(filename_queue)
    words = tf.string_split([line]).values
    ids = tf.string_to_number(words, tf.int32)
    ids = tf.reshape(tf.pad(ids, [[0, LENGTH]])[:LENGTH], [LENGTH])
    examples.append([ids, tf.size(words)])
ids, lengths = tf.train.shuffle_batch_join(
    examples, batch_size=BATCH, capacity=2000, min_after_dequeue=1000
)
build_s = time.perf_counter() - start

run_and_report([ids, lengths], steps, BATCH, build_s)
