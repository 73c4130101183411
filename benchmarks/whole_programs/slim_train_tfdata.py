"""slim_train.py with its input written by hand in tf.data (the same model and loop).

    python slim_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: seeded)
"""
import glob
import os
import sys

import tensorflow as tf

import imagenet_model
from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE = 32, 96
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()


def example(serialized):
    features = tf.parse_single_example(serialized, {
        "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
        "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=0),
    })
    image = tf.image.decode_jpeg(features["image/encoded"], channels=3)
    image = tf.image.resize_image_with_crop_or_pad(image, SIZE, SIZE)
    image = tf.image.random_flip_left_right(tf.cast(image, tf.float32) / 255.0)
    return image, tf.cast(features["image/class/label"], tf.int32)


files = sorted(glob.glob(os.path.join(data_dir, "imagenet-*.tfrecord")))
dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat()
dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=AUTOTUNE)
dataset = dataset.shuffle(10 * BATCH).map(example, AUTOTUNE).batch(BATCH, drop_remainder=True)
images, labels = tf.data.make_one_shot_iterator(dataset.prefetch(2)).get_next()
train(imagenet_model.train_op(images, labels), steps, BATCH)
