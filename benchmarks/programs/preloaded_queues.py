"""Preloaded arrays (the MNIST "fully_connected_preloaded" pattern): constants sliced by
slice_input_producer, batch (2 threads).

    python preloaded_queues.py DATA_DIR STEPS
"""
import os
import sys
import time

import numpy as np
import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128

arrays = np.load(os.path.join(data_dir, "preloaded.npz"))
start = time.perf_counter()
images_initializer = tf.constant(arrays["images"])
labels_initializer = tf.constant(arrays["labels"])
image, label = tf.train.slice_input_producer([images_initializer, labels_initializer])
image_batch, label_batch = tf.train.batch(
    [image * 2.0, label], batch_size=BATCH, num_threads=2, capacity=4 * BATCH)
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
