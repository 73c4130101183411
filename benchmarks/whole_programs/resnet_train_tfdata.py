"""resnet_train.py with its input written by hand in tf.data (the same model and loop).

    python resnet_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
"""
import glob
import os
import sys

import tensorflow as tf

from clock import maybe_seed
from clock import train
from resnet_model import loss_of

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE, CLASSES = 128, 32, 10
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()


def distort(value):
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record[0], tf.int32)
    image = tf.transpose(tf.reshape(record[1:], [3, SIZE, SIZE]), [1, 2, 0])
    image = tf.image.resize_image_with_crop_or_pad(tf.cast(image, tf.float32), SIZE + 4, SIZE + 4)
    image = tf.image.random_flip_left_right(tf.random_crop(image, [SIZE, SIZE, 3]))
    return tf.image.per_image_standardization(image), label


names = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
files = tf.data.Dataset.from_tensor_slices(names).shuffle(len(names)).repeat()
records = files.flat_map(lambda f: tf.data.FixedLengthRecordDataset(f, 1 + SIZE * SIZE * 3))
dataset = records.map(distort, AUTOTUNE).shuffle(8 * BATCH + BATCH).batch(BATCH, True)
images, labels = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
loss = loss_of(images, tf.one_hot(labels, CLASSES))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=global_step)

train([train_op, loss], steps, BATCH)
