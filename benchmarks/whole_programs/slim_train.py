"""A tf_slim image trainer as research/slim's train_image_classifier.py builds its input:
a DatasetDataProvider (parallel_read's two readers into a common queue, the
TFExampleDecoder's `case` on the image format), a crop or pad and a flip, tf.train.batch
with 4 threads, prefetch_queue, then a small classifier (the ImageNet-style data).

    python slim_train.py DATA_DIR STEPS        (BENCH_SEED=1: tf.set_random_seed(1))
"""
import glob
import os
import sys

import tensorflow as tf
import tf_slim as slim

import imagenet_model
from clock import maybe_seed
from clock import train

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, SIZE = 32, 96
maybe_seed()

files = sorted(glob.glob(os.path.join(data_dir, "imagenet-*.tfrecord")))
decoder = slim.tfexample_decoder.TFExampleDecoder(
    {
        "image/encoded": tf.FixedLenFeature((), tf.string, default_value=""),
        "image/format": tf.FixedLenFeature((), tf.string, default_value="jpeg"),
        "image/class/label": tf.FixedLenFeature([], tf.int64, default_value=0),
    },
    {
        "image": slim.tfexample_decoder.Image(channels=3),
        "label": slim.tfexample_decoder.Tensor("image/class/label"),
    },
)
dataset = slim.dataset.Dataset(data_sources=files, reader=tf.TFRecordReader, decoder=decoder,
                               num_samples=400, items_to_descriptions={})
provider = slim.dataset_data_provider.DatasetDataProvider(
    dataset, num_readers=2, common_queue_capacity=20 * BATCH, common_queue_min=10 * BATCH)
image, label = provider.get(["image", "label"])
image = tf.image.resize_image_with_crop_or_pad(image, SIZE, SIZE)
image = tf.image.random_flip_left_right(tf.cast(image, tf.float32) / 255.0)
images, labels = tf.train.batch([image, tf.cast(label, tf.int32)], batch_size=BATCH,
                                num_threads=4, capacity=5 * BATCH)
queue = slim.prefetch_queue.prefetch_queue([images, labels], capacity=2)
images, labels = queue.dequeue()
train(imagenet_model.train_op(images, labels), steps, BATCH)
