"""TF1 PTB-style producer: range_input_producer + strided_slice, under a Supervisor.

Unmodified TF1 code: run it with `compat-input run examples/ptb_producer.py`.
"""
import tempfile

import numpy as np
import tensorflow as tf

batch_size, num_steps = 4, 5
raw_data = np.arange(200, dtype=np.int32)
data_len = len(raw_data) // batch_size
data = tf.reshape(tf.convert_to_tensor(raw_data)[: batch_size * data_len], [batch_size, data_len])
epoch_size = (data_len - 1) // num_steps
i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()
x = tf.strided_slice(data, [0, i * num_steps], [batch_size, (i + 1) * num_steps])
x.set_shape([batch_size, num_steps])
y = tf.strided_slice(data, [0, i * num_steps + 1], [batch_size, (i + 1) * num_steps + 1])
y.set_shape([batch_size, num_steps])
total = tf.Variable(0, name="total")
update = tf.assign_add(total, tf.reduce_sum(y - x))
global_step = tf.train.get_or_create_global_step()

sv = tf.train.Supervisor(logdir=tempfile.mkdtemp(), save_model_secs=0, save_summaries_secs=0)
with sv.managed_session() as sess:
    for step in range(epoch_size + 3):
        xv, yv, _ = sess.run([x, y, update])
        print("step %d x0 %s y0 %s" % (step, xv[0].tolist(), yv[0].tolist()))
    print("total %d" % sess.run(total))
