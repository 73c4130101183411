"""inception_queues.py written by hand in tf.data.

    python inception_tfdata.py DATA_DIR STEPS
"""

import glob
import os
import sys
import time

import tensorflow as tf
from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 64
AUTOTUNE = tf.data.experimental.AUTOTUNE


def preprocess(serialized):
    features = tf.parse_single_example(
        serialized,
        features={
            "image": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_flip_left_right(tf.random_crop(image, [28, 28, 3]))
    return image * 2.0 - 1.0, tf.cast(features["label"], tf.int32)


start = time.perf_counter()
names = sorted(glob.glob(os.path.join(data_dir, "img*.tfrecord")))
files = tf.data.Dataset.from_tensor_slices(names).shuffle(len(names)).repeat()
records = files.interleave(tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=AUTOTUNE)
dataset = records.shuffle(1024 + BATCH).map(preprocess, AUTOTUNE).batch(BATCH)
images, labels = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
