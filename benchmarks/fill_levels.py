"""What seeing the input costs a step: the fill counts and the read clock, per read.

One process, TF1 behaviour, a `batch` of 20 cheap examples read by a one-op model, so that
a read's own overhead is most of the step: legacy queues, compat_input with reads timed (the
default), and compat_input with `configure(input_waits=False)`, interleaved; each figure
is the median of `--repeats` runs of `--steps` steps, in microseconds a step. Whole
programs, the same change measured between revisions: benchmarks/revisions.py.

    python benchmarks/fill_levels.py [--repeats 9] [--steps 3000]
"""

import argparse
import statistics
import time

import tensorflow as tf

tf1 = tf.compat.v1


def _step_us(api, steps: int) -> float:
    with tf.Graph().as_default():
        x = api.range_input_producer(10**8, shuffle=False).dequeue()
        batch = api.batch([tf.cast(x, tf.float32)], 20, capacity=200)
        loss = tf.reduce_sum(batch)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            run = sess.make_callable(loss)
            for _ in range(200):
                run()
            start = time.perf_counter()
            for _ in range(steps):
                run()
            elapsed = time.perf_counter() - start
            coord.request_stop()
            coord.join(threads)
    return elapsed / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    tf1.disable_v2_behavior()
    import compat_input

    modes = {
        "legacy queues": lambda: _step_us(tf1.train, args.steps),
        "compat_input, reads timed": lambda: (
            compat_input.configure(input_waits=True),
            _step_us(compat_input, args.steps),
        )[1],
        "compat_input, input_waits=False": lambda: (
            compat_input.configure(input_waits=False),
            _step_us(compat_input, args.steps),
        )[1],
    }
    times: dict = {mode: [] for mode in modes}
    for _ in range(args.repeats):
        for mode, measure in modes.items():
            times[mode].append(measure())
    print(f"us a step (medians of {args.repeats}, {args.steps} steps, TF1 behaviour)\n")
    print("| mode | us a step | runs |\n|---|---|---|")
    for mode, values in times.items():
        runs = ", ".join(f"{v:.0f}" for v in values)
        print(f"| {mode} | {statistics.median(values):.1f} | {runs} |")


if __name__ == "__main__":
    main()
