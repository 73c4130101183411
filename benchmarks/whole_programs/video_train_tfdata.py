"""video_train.py with its input written by hand in tf.data (the same model and loop).

    python video_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: seeded)
"""
import glob
import os
import sys

import tensorflow as tf

import video_model
from clock import maybe_seed
from clock import train_supervised

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, READERS = 256, 4
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "video-*.tfrecord")))
dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat()
dataset = dataset.interleave(tf.data.TFRecordDataset, cycle_length=READERS,
                             num_parallel_calls=AUTOTUNE)
dataset = dataset.shuffle(5 * BATCH).batch(BATCH).map(video_model.parse, AUTOTUNE)
_, features, labels, _ = tf.data.make_one_shot_iterator(dataset.prefetch(AUTOTUNE)).get_next()
train_supervised(video_model.train_op(features, labels), steps, BATCH)
