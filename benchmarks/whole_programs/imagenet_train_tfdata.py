"""imagenet_train.py with its input written by hand in tf.data (the same model and loop).

    python imagenet_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: seeded)
"""
import glob
import os
import sys

import tensorflow as tf

import imagenet_model
from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 32
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()


def example(serialized):
    encoded, label, bbox = imagenet_model.parse(serialized)
    return imagenet_model.distort(encoded, bbox), label


files = sorted(glob.glob(os.path.join(data_dir, "imagenet-*.tfrecord")))
dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat()
dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=AUTOTUNE)
dataset = dataset.map(example, AUTOTUNE).shuffle(10 * BATCH).batch(BATCH, drop_remainder=True)
images, labels = tf.data.make_one_shot_iterator(dataset.prefetch(AUTOTUNE)).get_next()
train(imagenet_model.train_op(images, labels), steps, BATCH)
