"""cifar10_train.py with its input written by hand in tf.data (the same model and loop).

    python cifar10_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
"""
import glob
import os
import sys

import tensorflow as tf

from cifar10_model import loss_of
from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()


def distort(value):
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record_bytes[0], tf.int32)
    image = tf.transpose(tf.reshape(record_bytes[1:], [3, 32, 32]), [1, 2, 0])
    image = tf.random_crop(tf.cast(image, tf.float32), [24, 24, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    return tf.image.per_image_standardization(image), label


filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
files = tf.data.Dataset.from_tensor_slices(filenames).shuffle(len(filenames)).repeat()
records = files.interleave(
    lambda f: tf.data.FixedLengthRecordDataset(f, 1 + 32 * 32 * 3), cycle_length=2,
    num_parallel_calls=AUTOTUNE)
dataset = records.map(distort, AUTOTUNE).shuffle(1000 + 3 * BATCH)
dataset = dataset.batch(BATCH, drop_remainder=True).prefetch(AUTOTUNE)
images, labels = tf.data.make_one_shot_iterator(dataset).get_next()
loss = loss_of(images, labels, BATCH)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

train([train_op, loss], steps, BATCH)
