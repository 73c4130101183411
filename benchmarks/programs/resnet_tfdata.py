"""resnet_queues.py written by hand in tf.data.

    python resnet_tfdata.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE, CLASSES = 128, 32, 10
AUTOTUNE = tf.data.experimental.AUTOTUNE


def distort(value):
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record[:1], tf.int32)
    image = tf.transpose(tf.reshape(record[1:], [3, SIZE, SIZE]), [1, 2, 0])
    image = tf.image.resize_image_with_crop_or_pad(tf.cast(image, tf.float32), SIZE + 4, SIZE + 4)
    image = tf.image.random_flip_left_right(tf.random_crop(image, [SIZE, SIZE, 3]))
    return tf.image.per_image_standardization(image), label


if os.environ.get("BENCH_SEED") == "1":
    tf.set_random_seed(1)
start = time.perf_counter()
names = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
files = tf.data.Dataset.from_tensor_slices(names).shuffle(len(names)).repeat()
records = files.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, 1 + SIZE * SIZE * 3))
dataset = records.map(distort, AUTOTUNE).shuffle(8 * BATCH + BATCH).batch(BATCH, True)
images, labels = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
labels = tf.one_hot(tf.reshape(labels, [BATCH]), CLASSES)
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
