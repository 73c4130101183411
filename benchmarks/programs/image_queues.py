"""Images in TFRecords: TFRecordReader + parse_single_example + decode_raw, random crop
and flip, per-image standardization, shuffle_batch (2 threads).

    python image_queues.py DATA_DIR STEPS
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
filenames = sorted(glob.glob(os.path.join(data_dir, "img*.tfrecord")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.TFRecordReader()
_, serialized = reader.read(filename_queue)
features = tf.parse_single_example(serialized, features={
    "image": tf.FixedLenFeature([], tf.string),
    "label": tf.FixedLenFeature([], tf.int64),
})
image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
image = tf.random_crop(tf.cast(image, tf.float32), [28, 28, 3])
image = tf.image.random_flip_left_right(image)
image = tf.image.per_image_standardization(image)
image_batch, label_batch = tf.train.shuffle_batch(
    [image, features["label"]], batch_size=BATCH, capacity=1000 + 3 * BATCH,
    min_after_dequeue=1000, num_threads=2)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
