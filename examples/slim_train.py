"""TF1 tf_slim training program: a slim Dataset read by DatasetDataProvider, batched,
prefetched through slim's prefetch_queue, trained with slim.learning.train (a Supervisor).

Unmodified TF1 code (it writes its own TFRecord files): run it with
`compat-input run examples/slim_train.py`. Needs `pip install tf-slim`.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf
import tf_slim as slim

workdir = tempfile.mkdtemp()
rng = np.random.RandomState(0)
paths = []
for shard in range(3):
    path = os.path.join(workdir, "train-%d-of-3.tfrecord" % shard)
    with tf.python_io.TFRecordWriter(path) as writer:
        for _ in range(40):
            label = rng.randint(0, 4)
            pixels = (rng.rand(8, 8) * 64 + label * 48).astype(np.uint8)
            example = tf.train.Example(features=tf.train.Features(feature={
                "image/raw": tf.train.Feature(bytes_list=tf.train.BytesList(value=[pixels.tobytes()])),
                "image/class/label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
            }))
            writer.write(example.SerializeToString())
    paths.append(path)

tf.set_random_seed(7)
keys_to_features = {
    "image/raw": tf.FixedLenFeature((), tf.string, default_value=""),
    "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=0),
}
items_to_handlers = {
    "image": slim.tfexample_decoder.Tensor("image/raw"),
    "label": slim.tfexample_decoder.Tensor("image/class/label"),
}
dataset = slim.dataset.Dataset(
    data_sources=os.path.join(workdir, "train-*"),
    reader=tf.TFRecordReader,
    decoder=slim.tfexample_decoder.TFExampleDecoder(keys_to_features, items_to_handlers),
    num_samples=120,
    items_to_descriptions={"image": "an 8x8 image", "label": "0 to 3"},
)
provider = slim.dataset_data_provider.DatasetDataProvider(
    dataset, num_readers=1, shuffle=False, common_queue_capacity=64, common_queue_min=16
)
raw, label = provider.get(["image", "label"])
image = tf.reshape(tf.cast(tf.decode_raw(raw, tf.uint8), tf.float32), [64]) / 255.0
images, labels = tf.train.batch([image, label], batch_size=10, num_threads=1, capacity=50)
labels = slim.one_hot_encoding(labels, 4)
batch_queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
images, labels = batch_queue.dequeue()

net = slim.fully_connected(images, 16, scope="fc1")
logits = slim.fully_connected(net, 4, activation_fn=None, scope="logits")
tf.losses.softmax_cross_entropy(labels, logits)
total_loss = tf.losses.get_total_loss()
optimizer = tf.train.GradientDescentOptimizer(0.5)
train_op = slim.learning.create_train_op(total_loss, optimizer)

final_loss = slim.learning.train(
    train_op,
    logdir=os.path.join(workdir, "train"),
    number_of_steps=36,
    save_summaries_secs=3600,
    save_interval_secs=3600,
)
print("final loss %.6f" % final_loss)
