"""The training loop every whole program here shares (a module beside the programs, as a
user's own helper would be): it times what a user waits for, prints one JSON line.

- build_s: from the program's first line after its imports to a built graph;
- start_s: Session, initializers and start_queue_runners;
- first_step_s: the first training step (the input's first batch included);
- steps_per_s: steady training steps, after `warmup` more;
the driver (benchmarks/whole.py) adds the process's whole wall time.
"""
import json
import os
import sys
import tempfile
import time

import tensorflow as tf

STARTED = time.perf_counter()


def seeded() -> bool:
    """Whether this run seeds its graph (the driver runs each program both ways)."""
    return os.environ.get("BENCH_SEED") == "1"


def maybe_seed() -> None:
    if seeded():
        tf.set_random_seed(1)


def train(train_op, steps, examples_per_step, warmup=5, init_ops=()):
    built = time.perf_counter()
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        sess.run(list(init_ops))
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        times = _steps(sess, train_op, steps, warmup)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    _report(built, *times, steps, examples_per_step)


def train_supervised(train_op, steps, examples_per_step, warmup=5):
    """`train` as youtube-8m's trainer runs: a Supervisor's managed session, its checkpoint
    and summary threads started with it (each runs once at once), `should_stop` each step."""
    sv = tf.train.Supervisor(logdir=tempfile.mkdtemp(prefix="whole_sv_"),
                             save_model_secs=15 * 60, save_summaries_secs=120)
    built = time.perf_counter()  # The Supervisor's Saver and initializers are graph too.
    with sv.managed_session() as sess:
        times = _steps(sess, train_op, steps, warmup, sv.should_stop)
    _report(built, *times, steps, examples_per_step)


def _steps(sess, train_op, steps, warmup, should_stop=lambda: False):
    """Runs the first step, `warmup` more, then `steps` timed ones (fewer if `should_stop`);
    returns when each phase began and when the last ended."""
    started = time.perf_counter()
    sess.run(train_op)
    first = time.perf_counter()
    for _ in range(warmup):
        sess.run(train_op)
    steady = time.perf_counter()
    for _ in range(steps):
        if should_stop():
            break
        sess.run(train_op)
    return started, first, steady, time.perf_counter()


def _report(built, started, first, steady, done, steps, examples_per_step):
    rate = steps / (done - steady)
    print(json.dumps({
        "build_s": built - STARTED,
        "start_s": started - built,
        "first_step_s": first - started,
        "steps_per_s": rate,
        "examples_per_s": rate * examples_per_step,
    }))
    sys.stdout.flush()
