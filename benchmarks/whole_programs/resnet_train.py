"""tensorflow/models' resnet CIFAR-10 trainer, whole, as it was written: cifar_input's input
built by hand (fixed-length records, pad, random crop, flip, standardization, its own
RandomShuffleQueue filled by 16 enqueue threads of one QueueRunner, dequeue_many, one-hot
labels), a residual network, momentum SGD.

    python resnet_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
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
maybe_seed()


def build_input():
    files = tf.train.string_input_producer(sorted(glob.glob(os.path.join(data_dir, "cifar*.bin"))))
    reader = tf.FixedLengthRecordReader(record_bytes=1 + SIZE * SIZE * 3)
    _, value = reader.read(files)
    record = tf.reshape(tf.decode_raw(value, tf.uint8), [1 + SIZE * SIZE * 3])
    label = tf.cast(tf.slice(record, [0], [1]), tf.int32)
    planes = tf.reshape(tf.slice(record, [1], [SIZE * SIZE * 3]), [3, SIZE, SIZE])
    image = tf.cast(tf.transpose(planes, [1, 2, 0]), tf.float32)
    image = tf.image.resize_image_with_crop_or_pad(image, SIZE + 4, SIZE + 4)
    image = tf.random_crop(image, [SIZE, SIZE, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.per_image_standardization(image)
    queue = tf.RandomShuffleQueue(
        capacity=16 * BATCH, min_after_dequeue=8 * BATCH,
        dtypes=[tf.float32, tf.int32], shapes=[[SIZE, SIZE, 3], [1]])
    enqueue = queue.enqueue([image, label])
    tf.train.add_queue_runner(tf.train.queue_runner.QueueRunner(queue, [enqueue] * 16))
    images, labels = queue.dequeue_many(BATCH)
    labels = tf.reshape(labels, [BATCH, 1])
    indices = tf.reshape(tf.range(0, BATCH, 1), [BATCH, 1])
    labels = tf.sparse_to_dense(tf.concat([indices, labels], 1), [BATCH, CLASSES], 1.0, 0.0)
    return images, labels


loss = loss_of(*build_input())
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=global_step)

train([train_op, loss], steps, BATCH)
