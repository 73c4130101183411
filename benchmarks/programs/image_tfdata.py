"""image_queues.py written by hand in tf.data.

    python image_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128
AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(serialized):
    features = tf.parse_single_example(serialized, features={
        "image": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64),
    })
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
    image = tf.random_crop(tf.cast(image, tf.float32), [28, 28, 3])
    image = tf.image.random_flip_left_right(image)
    return tf.image.per_image_standardization(image), features["label"]


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "img*.tfrecord")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
records = files.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=AUTOTUNE)
dataset = records.map(parse, AUTOTUNE).shuffle(1000 + 3 * BATCH).batch(BATCH, drop_remainder=True)
image_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
