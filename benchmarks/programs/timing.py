"""The timing loop every benchmark program shares (a module beside the programs, as a
user's own helper would be): warm-up steps, timed steps, one JSON line on stdout."""
import json
import sys
import time

import tensorflow as tf


def steps_per_second(sess, fetch, steps, warmup=10, feed=None):
    feed = feed or {}
    run = sess.make_callable(fetch, feed_list=list(feed))
    values = list(feed.values())
    for _ in range(warmup):
        run(*values)
    start = time.perf_counter()
    for _ in range(steps):
        run(*values)
    return steps / (time.perf_counter() - start)


def run_and_report(fetch, steps, examples_per_step, build_s, init_ops=(), feed=None):
    """Starts the input as TF1 programs do (Coordinator + start_queue_runners), times
    `steps` runs of `fetch` (fed `feed` on each) and prints {"examples_per_s",
    "steps_per_s", "build_s"}."""
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        sess.run(list(init_ops))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        rate = steps_per_second(sess, fetch, steps, feed=feed)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    result = {"examples_per_s": rate * examples_per_step, "steps_per_s": rate, "build_s": build_s}
    print(json.dumps(result))
    sys.stdout.flush()
