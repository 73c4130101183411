"""The PTB tutorial's language model trainer: reader.ptb_producer (range_input_producer
over the epoch's positions, strided slices of the word ids) feeding the tutorial's model.

    python ptb_word_lm.py DATA_DIR STEPS small|test   (BENCH_SEED=1: tf.set_random_seed(1))
"""
import sys

import tensorflow as tf

import ptb_model
from clock import maybe_seed
from clock import train

data_dir, steps, config = sys.argv[1], int(sys.argv[2]), ptb_model.CONFIGS[sys.argv[3]]
maybe_seed()


def ptb_producer(raw_data, batch_size, num_steps):
    with tf.name_scope("PTBProducer"):
        raw_data = tf.convert_to_tensor(raw_data, name="raw_data", dtype=tf.int32)
        data_len = tf.size(raw_data)
        batch_len = data_len // batch_size
        data = tf.reshape(raw_data[0:batch_size * batch_len], [batch_size, batch_len])
        epoch_size = (batch_len - 1) // num_steps
        i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()
        x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
        x.set_shape([batch_size, num_steps])
        y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
        y.set_shape([batch_size, num_steps])
        return x, y


x, y = ptb_producer(ptb_model.words(data_dir), config["batch"], config["steps"])
train(ptb_model.train_op(x, y, config), steps, config["batch"] * config["steps"])
