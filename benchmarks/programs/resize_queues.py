"""Fixed-length records (CIFAR-10 binary layout) resized to a model's input size, as
programs that feed small images to a network made for bigger ones do:
FixedLengthRecordReader + decode_raw + resize_images + random_flip_left_right +
per_image_standardization, shuffle_batch (4 threads).

    python resize_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE = 64, 48

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
_, record = reader.read(filename_queue)
raw = tf.decode_raw(record, tf.uint8)
label = tf.cast(raw[0], tf.int32)
image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
image = tf.image.resize_images(tf.cast(image, tf.float32), [SIZE, SIZE])
image = tf.image.per_image_standardization(tf.image.random_flip_left_right(image))
image_batch, label_batch = tf.train.shuffle_batch(
    [image, label], batch_size=BATCH, num_threads=4, capacity=1000 + 3 * BATCH,
    min_after_dequeue=1000)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
