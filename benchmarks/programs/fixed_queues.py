"""Fixed-length records (CIFAR-10 binary layout): FixedLengthRecordReader + decode_raw +
transpose, batch (2 threads).

    python fixed_queues.py DATA_DIR STEPS
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
filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
_, record = reader.read(filename_queue)
raw = tf.decode_raw(record, tf.uint8)
label = tf.cast(raw[0], tf.int32)
image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
image_batch, label_batch = tf.train.batch(
    [tf.cast(image, tf.float32) / 255.0, label], batch_size=BATCH, num_threads=2,
    capacity=4 * BATCH)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
