"""jpeg_queues.py with its batch size fed on every run, as facenet feeds
`batch_size_placeholder`: the same input, the size known only as each run asks.

    python jpeg_fed_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 32

start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "jpeg", "*.jpg")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.WholeFileReader()
path, contents = reader.read(filename_queue)
image = tf.image.decode_jpeg(contents, channels=3)
image = tf.image.resize_images(image, [72, 72])
image = tf.random_crop(image, [64, 64, 3])
image = tf.image.random_flip_left_right(image)
label = tf.string_to_number(
    tf.string_split([tf.string_split([path], "/").values[-1]], "_").values[0], tf.int32)
batch_size = tf.placeholder(tf.int32, [], name="batch_size")
image_batch, label_batch = tf.train.shuffle_batch(
    [image, label], batch_size=batch_size, capacity=500 + 3 * BATCH, min_after_dequeue=500,
    num_threads=4)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s, feed={batch_size: BATCH})
