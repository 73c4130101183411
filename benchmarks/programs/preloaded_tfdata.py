"""preloaded_queues.py written by hand in tf.data.

    python preloaded_tfdata.py DATA_DIR STEPS
"""
import os
import sys
import time

import numpy as np
import tensorflow as tf

from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH = 128
AUTOTUNE = tf.data.experimental.AUTOTUNE

arrays = np.load(os.path.join(data_dir, "preloaded.npz"))
start = time.perf_counter()
images, labels = tf.constant(arrays["images"]), tf.constant(arrays["labels"])
dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(len(arrays["labels"]))
dataset = dataset.repeat().map(lambda image, label: (image * 2.0, label), AUTOTUNE)
dataset = dataset.batch(BATCH, drop_remainder=True)
image_batch, label_batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report([image_batch, label_batch], steps, BATCH, build_s)
