"""Inception's input as tensorflow/models builds it by hand (image_processing.batch_inputs):
several TFRecordReaders over one filename producer enqueue serialized examples into one
RandomShuffleQueue (one enqueue op per reader, one QueueRunner), its dequeue() parsed and
preprocessed by four threads of batch_join.

    python inception_queues.py DATA_DIR STEPS
"""

import glob
import os
import sys
import time

import tensorflow as tf
from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, READERS, THREADS = 64, 4, 4

start = time.perf_counter()
files = tf.train.string_input_producer(sorted(glob.glob(os.path.join(data_dir, "img*.tfrecord"))))
examples = tf.RandomShuffleQueue(
    capacity=1024 + 3 * BATCH, min_after_dequeue=1024, dtypes=[tf.string]
)
enqueues = [examples.enqueue([tf.TFRecordReader().read(files)[1]]) for _ in range(READERS)]
tf.train.queue_runner.add_queue_runner(tf.train.queue_runner.QueueRunner(examples, enqueues))
serialized = examples.dequeue()
images_and_labels = []
for thread in range(THREADS):
    features = tf.parse_single_example(
        serialized,
        features={
            "image": tf.FixedLenFeature([], tf.string),
            "label": tf.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [32, 32, 3])
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.random_crop(image, [28, 28, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.subtract(tf.multiply(image, 2.0), 1.0)
    images_and_labels.append([image, tf.cast(features["label"], tf.int32)])
images, labels = tf.train.batch_join(
    images_and_labels, batch_size=BATCH, capacity=2 * THREADS * BATCH
)
build_s = time.perf_counter() - start

run_and_report([images, labels], steps, BATCH, build_s)
