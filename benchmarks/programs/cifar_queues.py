"""CIFAR-10 training input as the TensorFlow tutorial wrote it (cifar10_input.py):
fixed-length records, random 24x24 crop, random flip, brightness and contrast,
per-image standardization, shuffle_batch (16 threads).

    python cifar_queues.py DATA_DIR STEPS
"""
import glob
import os
import sys
import time

import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128

if os.environ.get("BENCH_SEED") == "1":
    tf.set_random_seed(1)
start = time.perf_counter()
filenames = sorted(glob.glob(os.path.join(data_dir, "cifar*.bin")))
filename_queue = tf.train.string_input_producer(filenames)
reader = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3)
_, value = reader.read(filename_queue)
record_bytes = tf.decode_raw(value, tf.uint8)
label = tf.cast(tf.strided_slice(record_bytes, [0], [1]), tf.int32)
depth_major = tf.reshape(tf.strided_slice(record_bytes, [1], [1 + 32 * 32 * 3]), [3, 32, 32])
uint8image = tf.transpose(depth_major, [1, 2, 0])
reshaped_image = tf.cast(uint8image, tf.float32)
distorted_image = tf.random_crop(reshaped_image, [24, 24, 3])
distorted_image = tf.image.random_flip_left_right(distorted_image)
distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)
float_image = tf.image.per_image_standardization(distorted_image)
float_image.set_shape([24, 24, 3])
label.set_shape([1])
min_queue_examples = 1000
images, label_batch = tf.train.shuffle_batch(
    [float_image, label], batch_size=BATCH, num_threads=16,
    capacity=min_queue_examples + 3 * BATCH, min_after_dequeue=min_queue_examples)
labels = tf.reshape(label_batch, [BATCH])
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
