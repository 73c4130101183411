"""sentences_train.py with its input written by hand in tf.data (the same model and loop).

    python sentences_train_tfdata.py DATA_DIR STEPS        (BENCH_SEED=1: seeded)
"""
import glob
import os
import sys

import tensorflow as tf

import sentences_model
from clock import maybe_seed
from clock import train_supervised

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, CAPACITY = 32, 40000
AUTOTUNE = tf.data.experimental.AUTOTUNE
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "sentences-*.tfrecord")))
dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files)).repeat()
dataset = dataset.flat_map(tf.data.TFRecordDataset).shuffle(int(0.6 * CAPACITY))
dataset = dataset.batch(BATCH).map(sentences_model.parse, AUTOTUNE).prefetch(AUTOTUNE)
sentences = tf.data.make_one_shot_iterator(dataset).get_next()
train_supervised(sentences_model.train_op(sentences), steps, BATCH)
