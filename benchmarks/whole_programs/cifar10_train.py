"""The CIFAR-10 tutorial's trainer, whole (cifar10_input.distorted_inputs, cifar10.inference,
cifar10.loss, plain SGD), as TF1 programs wrote it: queues, 16 reader threads,
shuffle_batch, variables made with tf.get_variable and truncated-normal initializers.

    python cifar10_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
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
maybe_seed()


def distorted_inputs():
    filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
    filename_queue = tf.train.string_input_producer(filenames)
    reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
    _, value = reader.read(filename_queue)
    record_bytes = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
    depth_major = tf.reshape(tf.strided_slice(record_bytes, [1], [1 + 32 * 32 * 3]), [3, 32, 32])
    image = tf.cast(tf.transpose(depth_major, [1, 2, 0]), tf.float32)
    image = tf.random_crop(image, [24, 24, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)
    image.set_shape([24, 24, 3])
    label.set_shape([1])
    images, labels = tf.train.shuffle_batch(
        [image, label], batch_size=BATCH, num_threads=16,
        capacity=1000 + 3 * BATCH, min_after_dequeue=1000)
    return images, tf.reshape(labels, [BATCH])


loss = loss_of(*distorted_inputs(), BATCH)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

train([train_op, loss], steps, BATCH)
