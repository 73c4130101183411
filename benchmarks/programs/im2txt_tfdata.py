"""im2txt_queues.py written by hand in tf.data.

    python im2txt_tfdata.py DATA_DIR STEPS
"""

import glob
import os
import sys
import time

import tensorflow as tf
from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, MIN_EXAMPLES = 32, 512
AUTOTUNE = tf.data.experimental.AUTOTUNE


def preprocess(serialized):
    context, sequence = tf.parse_single_sequence_example(
        serialized,
        context_features={"image/data": tf.FixedLenFeature([], dtype=tf.string)},
        sequence_features={"image/caption_ids": tf.FixedLenSequenceFeature([], dtype=tf.int64)},
    )
    image = tf.image.decode_jpeg(context["image/data"], channels=3)
    image = tf.image.resize_images(tf.image.convert_image_dtype(image, tf.float32), [80, 80])
    image = tf.image.random_flip_left_right(tf.random_crop(image, [64, 64, 3]))
    image = tf.image.random_brightness(image, max_delta=32.0 / 255.0)
    image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
    image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
    image = (tf.clip_by_value(image, 0.0, 1.0) - 0.5) * 2.0
    caption = sequence["image/caption_ids"]
    n = tf.shape(caption)[0] - 1
    return image, caption[:n], caption[1:], tf.ones([n], tf.int32)


start = time.perf_counter()
names = sorted(glob.glob(os.path.join(data_dir, "captions*.tfrecord")))
files = tf.data.Dataset.from_tensor_slices(names).shuffle(len(names)).repeat()
records = files.flat_map(tf.data.TFRecordDataset).shuffle(MIN_EXAMPLES + BATCH)
dataset = records.map(preprocess, AUTOTUNE).padded_batch(BATCH, ([64, 64, 3], [-1], [-1], [-1]))
batch = dataset.prefetch(AUTOTUNE).make_one_shot_iterator().get_next()
build_s = time.perf_counter() - start

run_and_report(batch, steps, BATCH, build_s)
