"""TF1 training with a full validation pass every K steps, in one session.

A TF1 program (run it with `compat-input run examples/validation_every_k.py`) that uses
what queues could never do: `compat_input.iterate` rewinds the validation input and runs
it to its end while the training input stays where it was, and the Supervisor's
checkpoints hold the input position.
"""
import tempfile

import numpy as np
import tensorflow as tf

import compat_input

rng = np.random.RandomState(0)
train_x = rng.rand(200, 4).astype(np.float32)
train_y = train_x.sum(axis=1, keepdims=True)
valid_x = rng.rand(10, 4).astype(np.float32)
valid_y = valid_x.sum(axis=1, keepdims=True)

x, y = tf.train.slice_input_producer([train_x, train_y], seed=1)
batch_x, batch_y = tf.train.batch([x, y], batch_size=16)
vx, vy = tf.train.slice_input_producer([valid_x, valid_y], num_epochs=1, shuffle=False)
valid_bx, valid_by = tf.train.batch([vx, vy], batch_size=4, allow_smaller_final_batch=True)

w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(batch_x, w) - batch_y))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
valid_error = tf.reduce_sum(tf.square(tf.matmul(valid_bx, w) - valid_by))

print("supervisor is compat_input's:", tf.train.Supervisor is compat_input.Supervisor)
sv = tf.train.Supervisor(logdir=tempfile.mkdtemp(), save_model_secs=0, save_summaries_secs=0)
with sv.managed_session() as sess:
    for step in range(1, 61):
        sess.run(train_op)
        if step % 20 == 0:
            sizes, total = [], 0.0
            for error, batch in compat_input.iterate(sess, [valid_error, valid_bx]):
                sizes.append(len(batch))
                total += error
            print("step %d validation batches %s mse %.4f" % (step, sizes, total / sum(sizes)))
