"""An ImageNet-style trainer as inception's image_processing.py fed one: JPEGs in
TFRecords, parse_single_example, sample_distorted_bounding_box, slice, resize, flip,
brightness, shuffle_batch with 4 threads, then a small classifier.

    python imagenet_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
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
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "imagenet-*.tfrecord")))
filename_queue = tf.train.string_input_producer(files, shuffle=True, capacity=16)
_, serialized = tf.TFRecordReader().read(filename_queue)
encoded, label, bbox = imagenet_model.parse(serialized)
image = imagenet_model.distort(encoded, bbox)
images, labels = tf.train.shuffle_batch(
    [image, label], batch_size=BATCH, num_threads=4, capacity=20 * BATCH,
    min_after_dequeue=10 * BATCH)
train(imagenet_model.train_op(images, labels), steps, BATCH)
