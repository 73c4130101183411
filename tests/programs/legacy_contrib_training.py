"""contrib.training's `bucket_by_sequence_length` on legacy queues, for the tests' legacy
runs (TensorFlow 2 has no tf.contrib): written here from contrib's description, for
one enqueue thread and `allow_smaller_final_batch=False`.

One padding queue per bucket and a top queue, as contrib built them. Contrib moved a full
bucket's batch to the top queue on a thread of its own per bucket, so two buckets that
filled one example apart could reach the top queue in either order; here the example's
own enqueue moves it, so batches leave in the order their buckets fill, every run.
"""

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1


def bucket_by_sequence_length(
    input_length, tensors, batch_size, bucket_boundaries, capacity=32, dynamic_pad=False, **_
):
    if isinstance(tensors, dict):  # contrib took a dict too, and gave one back.
        keys = sorted(tensors)
        lengths, batched = bucket_by_sequence_length(
            input_length,
            [tensors[k] for k in keys],
            batch_size,
            bucket_boundaries,
            capacity,
            dynamic_pad,
        )
        return lengths, dict(zip(keys, batched))
    length = tf.convert_to_tensor(input_length, tf.int32)
    low = [np.iinfo(np.int32).min, *bucket_boundaries]
    high = [*bucket_boundaries, np.iinfo(np.int32).max]
    which = tf.cast(tf.reduce_min(tf1.where((low <= length) & (length < high))), tf.int32)
    example = [length, *tensors]
    dtypes = [t.dtype for t in example]
    shapes = [t.shape for t in example]
    buckets = [tf1.PaddingFIFOQueue(capacity, dtypes, shapes) for _ in low]
    top = tf1.PaddingFIFOQueue(capacity, dtypes, [[None, *s] for s in shapes])

    def into(bucket):
        enqueued = bucket.enqueue(example)
        with tf.control_dependencies([enqueued]):
            full = bucket.size() >= batch_size
        return tf1.cond(full, lambda: top.enqueue(bucket.dequeue_many(batch_size)), tf.no_op)

    steps = [
        tf1.cond(tf.equal(which, i), lambda b=b: into(b), tf.no_op) for i, b in enumerate(buckets)
    ]
    tf1.train.add_queue_runner(tf1.train.QueueRunner(top, [tf.group(*steps)]))
    lengths, *batched = top.dequeue()
    return lengths, batched
