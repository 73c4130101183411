"""TF1 CSV input: TextLineReader + decode_csv + batch, with a Coordinator loop.

Unmodified TF1 code: run it with `compat-input run examples/csv_batch.py`.
"""
import os
import tempfile

import tensorflow as tf

data_dir = tempfile.mkdtemp()
filenames = []
for part in range(2):
    path = os.path.join(data_dir, "part%d.csv" % part)
    with open(path, "w") as f:
        f.write("id,height,weight\n")
        for i in range(5):
            f.write("%d,%.1f,%d\n" % (part * 10 + i, 150 + i * 2.5, 50 + i))
    filenames.append(path)

filename_queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
reader = tf.TextLineReader(skip_header_lines=1)
key, value = reader.read(filename_queue)
ident, height, weight = tf.decode_csv(value, record_defaults=[[0], [0.0], [0]])
features = tf.stack([height / 100.0, tf.cast(weight, tf.float32)])
ids, batch_features = tf.train.batch([ident, features], batch_size=4, allow_smaller_final_batch=True)

with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    step = 0
    try:
        while not coord.should_stop():
            i, f = sess.run([ids, batch_features])
            print("step %d ids %s mean %.3f" % (step, i.tolist(), f.mean()))
            step += 1
    except tf.errors.OutOfRangeError:
        print("done after %d steps" % step)
    finally:
        coord.request_stop()
    coord.join(threads)
