"""CIFAR-10 input as tensorflow/models' resnet trainer builds it by hand: fixed-length
records, pad to 36x36, random 32x32 crop, random flip, per-image standardization, then its
own RandomShuffleQueue filled by 16 enqueue threads of one QueueRunner and read with
dequeue_many, labels made one-hot.

    python resnet_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE, CLASSES = 128, 32, 10

if os.environ.get("BENCH_SEED") == "1":
    tf.set_random_seed(1)
start = time.perf_counter()
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
    capacity=16 * BATCH,
    min_after_dequeue=8 * BATCH,
    dtypes=[tf.float32, tf.int32],
    shapes=[[SIZE, SIZE, 3], [1]],
)
enqueue = queue.enqueue([image, label])
tf.train.add_queue_runner(tf.train.queue_runner.QueueRunner(queue, [enqueue] * 16))
images, labels = queue.dequeue_many(BATCH)
labels = tf.reshape(labels, [BATCH, 1])
indices = tf.reshape(tf.range(0, BATCH, 1), [BATCH, 1])
labels = tf.sparse_to_dense(tf.concat([indices, labels], 1), [BATCH, CLASSES], 1.0, 0.0)
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
