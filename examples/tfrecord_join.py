"""TF1 TFRecord input: several readers over one filename queue into shuffle_batch_join.

Unmodified TF1 code: run it with `compat-input run examples/tfrecord_join.py`. The order of
examples is random on legacy queues, so the program prints order-free summaries.
"""
import os
import tempfile

import tensorflow as tf

data_dir = tempfile.mkdtemp()
filenames = []
for shard in range(4):
    path = os.path.join(data_dir, "shard-%d.tfrecord" % shard)
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(25):
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[shard * 100 + i])),
                "pixels": tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)] * 4)),
            }))
            writer.write(example.SerializeToString())
    filenames.append(path)

filename_queue = tf.train.string_input_producer(filenames, num_epochs=1)
examples = []
for _ in range(3):
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    parsed = tf.parse_single_example(serialized, {
        "id": tf.FixedLenFeature([], tf.int64),
        "pixels": tf.FixedLenFeature([4], tf.float32),
    })
    image = tf.image.per_image_standardization(tf.reshape(parsed["pixels"] + 1.0, [2, 2, 1]))
    examples.append([parsed["id"], image])
ids, images = tf.train.shuffle_batch_join(
    examples, batch_size=16, capacity=200, min_after_dequeue=50, allow_smaller_final_batch=True)

with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    seen = []
    try:
        while True:
            i, im = sess.run([ids, images])
            seen.extend(i.tolist())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
print("examples %d distinct %d" % (len(seen), len(set(seen))))
print("id sum %d" % sum(seen))
print("per shard %s" % [sum(1 for s in seen if s // 100 == k) for k in range(4)])
