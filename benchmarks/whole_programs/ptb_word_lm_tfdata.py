"""ptb_word_lm.py with ptb_producer written by hand in tf.data (the same model and loop).

    python ptb_word_lm_tfdata.py DATA_DIR STEPS small|test   (BENCH_SEED=1: seeded)
"""
import sys

import tensorflow as tf

import ptb_model
from clock import maybe_seed
from clock import train

data_dir, steps, config = sys.argv[1], int(sys.argv[2]), ptb_model.CONFIGS[sys.argv[3]]
maybe_seed()

ids = ptb_model.words(data_dir)
batch, num_steps = config["batch"], config["steps"]
batch_len = len(ids) // batch
data = tf.constant(ids[: batch * batch_len].reshape(batch, batch_len), tf.int32)
epoch_size = (batch_len - 1) // num_steps


def window(i):
    i = tf.cast(i, tf.int32)
    return (data[:, i * num_steps:(i + 1) * num_steps],
            data[:, i * num_steps + 1:(i + 1) * num_steps + 1])


dataset = tf.data.Dataset.range(epoch_size).repeat().map(window).prefetch(2)
x, y = tf.data.make_one_shot_iterator(dataset).get_next()
x.set_shape([batch, num_steps])
y.set_shape([batch, num_steps])
train(ptb_model.train_op(x, y, config), steps, batch * num_steps)
