"""Several readers joined: four TFRecordReaders over one filename queue, each parsing and
augmenting, into shuffle_batch_join (the inception / slim pattern).

    python join_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128
READERS = 4

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "img*.tfrecord")))
filename_queue = tf.train.string_input_producer(filenames)
examples = []
for _ in range(READERS):
    _, serialized = tf.TFRecordReader().read(filename_queue)
    features = tf.parse_single_example(serialized, features={
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
    image = tf.random_crop(tf.cast(image, tf.float32), [28, 28, 3])
    image = tf.image.random_flip_left_right(image)
    examples.append([tf.image.per_image_standardization(image), features["label"]])
image_batch, label_batch = tf.train.shuffle_batch_join(
    examples, batch_size=BATCH, capacity=1000 + 3 * BATCH, min_after_dequeue=1000)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
