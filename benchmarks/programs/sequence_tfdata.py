"""sequence_queues.py written by hand in tf.data.

    python sequence_tfdata.py DATA_DIR STEPS
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


def parse(serialized):
    context, lists = tf.parse_single_sequence_example(
        serialized,
        context_features={"label": tf.FixedLenFeature([], tf.int64)},
        sequence_features={"frames": tf.FixedLenSequenceFeature([8 * 8 * 3], tf.float32)},
    )
    return tf.reshape(lists["frames"], [4, 8, 8, 3]), context["label"]


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "frames*.tfrecord")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
records = files.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=AUTOTUNE)
dataset = records.map(parse, AUTOTUNE).shuffle(BATCH * 100).batch(BATCH, drop_remainder=True)
frames_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([frames_batch / 2.0, label_batch], steps, BATCH, build_s)
