"""jpeg_fed_queues.py written by hand in tf.data: tf.data fixes its batch size, so the
size a user would feed is a constant here (what a rewrite by hand does).

    python jpeg_fed_tfdata.py DATA_DIR STEPS
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


def load(path):
    image = tf.image.decode_jpeg(tf.read_file(path), channels=3)
    image = tf.image.resize_images(image, [72, 72])
    image = tf.random_crop(image, [64, 64, 3])
    image = tf.image.random_flip_left_right(image)
    name = tf.string_split([path], "/").values[-1]
    label = tf.string_to_number(tf.string_split([name], "_").values[0], tf.int32)
    return image, label


start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "jpeg", "*.jpg")))
dataset = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
dataset = dataset.map(load, AUTOTUNE).shuffle(500 + 3 * BATCH).batch(BATCH, drop_remainder=True)
image_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
