"""im2txt's input as tensorflow/models builds it by hand (ops/inputs.py and
show_and_tell_model.build_inputs): a TFRecordReader enqueues serialized SequenceExamples into
its own RandomShuffleQueue (one QueueRunner); four preprocessing threads each dequeue() one,
parse the JPEG and its caption, decode, resize, crop, flip and distort colours in their own
order; batch_join pads the captions (input, target and mask sequences) per batch.

    python im2txt_queues.py DATA_DIR STEPS
"""

import glob
import os
import sys
import time

import tensorflow as tf
from timing import run_and_report

data_dir, steps = sys.argv[1], int(sys.argv[2])
BATCH, THREADS, MIN_EXAMPLES = 32, 4, 512


def process_image(encoded, thread_id):
    image = tf.image.convert_image_dtype(tf.image.decode_jpeg(encoded, channels=3), tf.float32)
    image = tf.image.resize_images(image, size=[80, 80], method=tf.image.ResizeMethod.BILINEAR)
    image = tf.image.random_flip_left_right(tf.random_crop(image, [64, 64, 3]))
    image = tf.image.random_brightness(image, max_delta=32.0 / 255.0)
    if thread_id % 2 == 0:
        image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
        image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
    else:
        image = tf.image.random_contrast(image, lower=0.5, upper=1.5)
        image = tf.image.random_saturation(image, lower=0.5, upper=1.5)
    return (tf.clip_by_value(image, 0.0, 1.0) - 0.5) * 2.0


start = time.perf_counter()
files = tf.train.string_input_producer(
    sorted(glob.glob(os.path.join(data_dir, "captions*.tfrecord"))), capacity=16
)
values = tf.RandomShuffleQueue(
    capacity=MIN_EXAMPLES + 100 * BATCH,
    min_after_dequeue=MIN_EXAMPLES,
    dtypes=[tf.string],
    name="random_input_queue",
)
_, value = tf.TFRecordReader().read(files)
tf.train.queue_runner.add_queue_runner(
    tf.train.queue_runner.QueueRunner(values, [values.enqueue([value])])
)
enqueue_list = []
for thread_id in range(THREADS):
    context, sequence = tf.parse_single_sequence_example(
        values.dequeue(),
        context_features={"image/data": tf.FixedLenFeature([], dtype=tf.string)},
        sequence_features={"image/caption_ids": tf.FixedLenSequenceFeature([], dtype=tf.int64)},
    )
    image = process_image(context["image/data"], thread_id)
    caption = sequence["image/caption_ids"]
    input_length = tf.expand_dims(tf.subtract(tf.shape(caption)[0], 1), 0)
    enqueue_list.append(
        [
            image,
            tf.slice(caption, [0], input_length),
            tf.slice(caption, [1], input_length),
            tf.ones(input_length, dtype=tf.int32),
        ]
    )
batch = tf.train.batch_join(
    enqueue_list, batch_size=BATCH, capacity=2 * THREADS * BATCH, dynamic_pad=True
)
build_s = time.perf_counter() - start

run_and_report(batch, steps, BATCH, build_s)
