"""A trainer with skip_thoughts' input shape (tensorflow/models research/skip_thoughts,
`input_ops.prefetch_input_data`): a TFRecordReader fills the program's own
`RandomShuffleQueue` of serialized records (`min_after_dequeue` 60% of its capacity), read
with `dequeue_many` and parsed as a batch of variable-length lists, in a Supervisor (its
checkpoint taken at start).

    python sentences_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
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
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "sentences-*.tfrecord")))
filename_queue = tf.train.string_input_producer(files, capacity=16, name="filename_queue")
values_queue = tf.RandomShuffleQueue(
    capacity=CAPACITY, min_after_dequeue=int(0.6 * CAPACITY), dtypes=[tf.string],
    shapes=[[]], name="random_input_queue")
_, value = tf.TFRecordReader().read(filename_queue)
tf.train.queue_runner.add_queue_runner(
    tf.train.queue_runner.QueueRunner(values_queue, [values_queue.enqueue([value])]))
tf.summary.scalar("queue/random_input_queue/fraction_of_%d_full" % CAPACITY,
                  tf.cast(values_queue.size(), tf.float32) * (1.0 / CAPACITY))
sentences = sentences_model.parse(values_queue.dequeue_many(BATCH))
train_supervised(sentences_model.train_op(sentences), steps, BATCH)
