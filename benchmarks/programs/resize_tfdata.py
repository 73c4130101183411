"""resize_queues.py written by hand in tf.data.

    python resize_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE = 64, 48
AUTOTUNE = tf.data.experimental.AUTOTUNE


def decode(record):
    raw = tf.decode_raw(record, tf.uint8)
    image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
    image = tf.image.resize_images(tf.cast(image, tf.float32), [SIZE, SIZE])
    image = tf.image.per_image_standardization(tf.image.random_flip_left_right(image))
    return image, tf.cast(raw[0], tf.int32)


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
records = files.interleave(
    lambda f: tf.data.FixedLengthRecordDataset(f, 1 + 32 * 32 * 3), cycle_length=2,
    num_parallel_calls=AUTOTUNE)
dataset = records.map(decode, AUTOTUNE).shuffle(1000).batch(BATCH, drop_remainder=True)
image_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
