"""A Supervisor-driven TF1 program in the style of the era (written for compat_input's
tests): TFRecords of images parsed and cropped, a queue the program builds itself and
fills with its own QueueRunner, tf.train.batch on top, Supervisor.managed_session and a
step loop that stops on its own."""

import os
import tempfile

import numpy as np
import tensorflow as tf


def write_images(path):
    writer = tf.python_io.TFRecordWriter(path)
    rng = np.random.RandomState(5)
    for i in range(60):
        image = rng.randint(0, 256, size=[6, 6, 1]).astype(np.uint8)
        features = {
            "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
            "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 3])),
        }
        writer.write(
            tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()
        )
    writer.close()


def input_queue(path):
    files = tf.train.string_input_producer([path], shuffle=False)
    _, serialized = tf.TFRecordReader().read(files)
    parsed = tf.parse_single_example(
        serialized,
        {"image": tf.FixedLenFeature([], tf.string), "label": tf.FixedLenFeature([], tf.int64)},
    )
    image = tf.reshape(tf.decode_raw(parsed["image"], tf.uint8), [6, 6, 1])
    image = tf.image.crop_to_bounding_box(image, 1, 1, 4, 4)
    image = tf.cast(image, tf.float32) / 255.0
    # The program's own queue and runner, as many TF1 trainers built them.
    queue = tf.FIFOQueue(32, [tf.float32, tf.int64], shapes=[[4, 4, 1], []])
    enqueue = queue.enqueue([image, parsed["label"]])
    tf.train.add_queue_runner(tf.train.QueueRunner(queue, [enqueue]))
    image, label = queue.dequeue()
    return tf.train.batch([image, label], batch_size=10)


def main():
    root = tempfile.mkdtemp()
    path = os.path.join(root, "images.tfrecord")
    write_images(path)
    images, labels = input_queue(path)
    w = tf.Variable(tf.zeros([16, 3]), name="w")
    logits = tf.matmul(tf.reshape(images, [-1, 16]), w)
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
    first_label = labels[0]
    sv = tf.train.Supervisor(
        logdir=os.path.join(root, "logs"), save_model_secs=0, save_summaries_secs=0
    )
    with sv.managed_session() as sess:
        while not sv.should_stop():
            _, value, done, first = sess.run([train, loss, step, first_label])
            print("step %d loss %.5f first label %d" % (done, value, first))
            if done >= 6:
                sv.request_stop()


if __name__ == "__main__":
    main()
