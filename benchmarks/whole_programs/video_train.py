"""A trainer with youtube-8m's input shape: TFRecordReaders' `read_up_to` blocks,
`parse_example` over each block, `shuffle_batch_join` with `enqueue_many`, in a Supervisor.

    python video_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
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
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "video-*.tfrecord")))
filename_queue = tf.train.string_input_producer(files, shuffle=True)
blocks = []
for _ in range(READERS):
    _, serialized = tf.TFRecordReader().read_up_to(filename_queue, num_records=1024)
    blocks.append(video_model.parse(serialized))
_, features, labels, _ = tf.train.shuffle_batch_join(
    blocks, batch_size=BATCH, capacity=5 * BATCH, min_after_dequeue=BATCH,
    allow_smaller_final_batch=True, enqueue_many=True)
train_supervised(video_model.train_op(features, labels), steps, BATCH)
