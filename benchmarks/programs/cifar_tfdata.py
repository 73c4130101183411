"""cifar_queues.py written by hand in tf.data.

    python cifar_tfdata.py DATA_DIR STEPS
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


def distort(value):
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record_bytes[0], tf.int32)
    image = tf.transpose(tf.reshape(record_bytes[1:], [3, 32, 32]), [1, 2, 0])
    image = tf.random_crop(tf.cast(image, tf.float32), [24, 24, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    return tf.image.per_image_standardization(image), label


if os.environ.get("BENCH_SEED") == "1":
    tf.set_random_seed(1)
start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
records = files.interleave(
    lambda f: tf.data.FixedLengthRecordDataset(f, 1 + 32 * 32 * 3), cycle_length=2,
    num_parallel_calls=AUTOTUNE)
dataset = records.map(distort, AUTOTUNE).shuffle(1000 + 3 * BATCH)
dataset = dataset.batch(BATCH, drop_remainder=True)
images, labels = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
