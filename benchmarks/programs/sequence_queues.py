"""Sequences of frames in TFRecords (cross_conv's input): TFRecordReader +
parse_single_sequence_example of a FixedLenSequenceFeature, reshaped to a fixed count of
frames, shuffle_batch (4 threads).

    python sequence_queues.py DATA_DIR STEPS
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
filenames = sorted(glob.glob(os.path.join(data_dir, "frames*.tfrecord")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
context, lists = tf.parse_single_sequence_example(
    serialized,
    context_features={"label": tf.FixedLenFeature([], tf.int64)},
    sequence_features={"frames": tf.FixedLenSequenceFeature([8 * 8 * 3], tf.float32)},
)
frames = tf.reshape(lists["frames"], [4, 8, 8, 3])
frames_batch, label_batch = tf.train.shuffle_batch(
    [frames, context["label"]], batch_size=BATCH, capacity=BATCH * 100,
    min_after_dequeue=BATCH * 4, num_threads=4)
build_s = time.perf_counter() - start

run_and_report([frames_batch / 2.0, label_batch], steps, BATCH, build_s)
