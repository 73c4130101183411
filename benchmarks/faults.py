"""Costs of the fault paths, compat_input against TensorFlow's own queues, side by side.

- many pipelines: a graph with N per-tower inputs (string_input_producer, TextLineReader,
  decode_csv, shuffle_batch with 2 threads), and the same written by hand in tf.data:
  seconds to build, to start and take the first batch of every tower, to close the
  session after 20 more batches, and peak memory added;
- locating: a 32 MB CSV with a bad line deep inside, a py_func per example, batch 128:
  seconds the failing `sess.run` takes, and the py_func calls made in it.

Each measurement runs in its own process; figures are medians of `--repeats` runs.

    python benchmarks/faults.py [--repeats 3] [--towers 50]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

import data

HERE = os.path.dirname(os.path.abspath(__file__))

_MANY = r"""
import os, sys, time, resource, json
import numpy as np
import tensorflow as tf
tf1 = tf.compat.v1; tf1.disable_v2_behavior()  # TF1 behaviour, where users run
mode, n, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if mode == "compat":
    import compat_input as train, compat_input as readers
else:
    train, readers = tf1.train, tf1
# Importing TensorFlow leaves the garbage collector a full collection due (its 300,000
# objects): where it lands is chance, 0.13 s inside the build or not. Every mode pays it
# first, outside the timings.
import gc; gc.collect()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
fetches, iterators = [], []
for i in range(n):
    with tf1.name_scope(f"tower{i}"):
        if mode == "tfdata":  # What a person would write by hand.
            lines = tf.data.TextLineDataset([f"{root}/t{i}.csv"]).repeat()
            rows = lines.map(lambda l: tuple(tf1.decode_csv(l, [[0], [0]])), 2)
            it = tf1.data.make_initializable_iterator(rows.shuffle(100).batch(32).prefetch(3))
            iterators.append(it)
            fetches.append(it.get_next())
            continue
        queue = train.string_input_producer([f"{root}/t{i}.csv"], shuffle=False)
        _, line = readers.TextLineReader().read(queue)
        a, b = tf1.decode_csv(line, [[0], [0]])
        fetches.append(train.shuffle_batch([a, b], 32, 200, 100, num_threads=2))
built = time.perf_counter() - t0
sess = tf1.Session()
sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
coord = tf1.train.Coordinator()
t0 = time.perf_counter()
if mode == "tfdata":
    sess.run([it.initializer for it in iterators])
else:
    threads = train.start_queue_runners(sess, coord)
sess.run(fetches)
started = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(20):
    sess.run(fetches)
coord.request_stop()
# tf.data's tuning thread can miss its iterator's cancellation (TF 2.21) and close then
# waits up to 60 s per iterator: give up after 60 s and report that.
import threading
t0 = time.perf_counter()
closing = threading.Thread(target=sess.close, daemon=True)
closing.start()
closing.join(60)
closed = time.perf_counter() - t0 if not closing.is_alive() else float("inf")
print(json.dumps({"build_s": built, "start_s": started, "close_s": closed,
                  "memory_mb": (peak - base) / 1024}))
os._exit(0)
"""

_LOCATE = r"""
import os, sys, time, json
import tensorflow as tf
tf1 = tf.compat.v1; tf1.disable_v2_behavior()  # TF1 behaviour, where users run
import compat_input
mode, path = sys.argv[1], sys.argv[2]
if mode == "legacy":
    train, readers = tf1.train, tf1
else:
    train, readers = compat_input, compat_input
if mode == "compat":
    compat_input.install()
calls = [0]
def count(v):
    calls[0] += 1
    return v
queue = train.string_input_producer([path], num_epochs=1, shuffle=False)
_, line = readers.TextLineReader().read(queue)
a, b = tf1.decode_csv(line, [[0], [0]])
a = tf1.py_func(count, [a], tf.int32); a.set_shape([])
batch = train.batch([a, b], 128)
with tf1.Session() as sess:
    sess.run(tf1.local_variables_initializer())
    coord = tf1.train.Coordinator()
    train.start_queue_runners(sess, coord)
    try:
        while True:
            t0, c0 = time.perf_counter(), calls[0]
            sess.run(batch)
    except tf.errors.OpError as error:
        failing = time.perf_counter() - t0
        named = error.message.splitlines()[0]
    coord.request_stop()
print(json.dumps({"failing_run_s": failing, "py_func_calls": calls[0] - c0, "first_line": named}))
os._exit(0)
"""


def _run(code: str, *args) -> dict:
    command = [sys.executable, "-c", code, *map(str, args)]
    env = {"PYTHONPATH": os.path.dirname(HERE)}
    return json.loads(data.last_line(command, str(args[0]), env=env, timeout=900))


def _median(runs: list, key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _close(runs: list) -> str:
    close = _median(runs, "close_s")
    gave_up = sum(r["close_s"] == float("inf") for r in runs)
    shown = "> 60" if close == float("inf") else f"{close:.2f}"
    return f"{shown} ({gave_up} of {len(runs)} over 60 s)" if gave_up else shown


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--towers", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        for i in range(args.towers):
            with open(f"{root}/t{i}.csv", "w") as f:
                f.write("".join(f"{j},{j % 7}\n" for j in range(1000)))
        big = f"{root}/big.csv"
        with open(big, "w") as f:
            f.write(
                "".join("x,y\n" if i == 600_000 else f"{i},{i % 997}\n" for i in range(1_000_000))
            )
        many = {m: [] for m in ("legacy", "tfdata", "compat")}
        locate = {m: [] for m in ("legacy", "raw", "compat")}
        for _ in range(args.repeats):  # Interleaved, so machine noise falls on every side.
            for mode in many:
                many[mode].append(_run(_MANY, mode, args.towers, root))
            for mode in locate:
                locate[mode].append(_run(_LOCATE, mode, big))
    print(f"## Many pipelines ({args.towers} towers, medians of {args.repeats}, TF1 behaviour)\n")
    print("| | build s | start + first batch s | close s | memory added MB |")
    print("|---|---|---|---|---|")
    for mode, runs in many.items():
        print(
            f"| {mode} | {_median(runs, 'build_s'):.2f} | {_median(runs, 'start_s'):.2f} | "
            f"{_close(runs)} | {_median(runs, 'memory_mb'):.0f} |"
        )
    print(f"\n## Naming a bad line (32 MB CSV, line 600,001, medians of {args.repeats}, TF1 behaviour)\n")
    print("| | failing sess.run s | py_func calls in it | first line |")
    print("|---|---|---|---|")
    names = {
        "legacy": "legacy",
        "raw": "compat_input, not installed",
        "compat": "compat_input, install()",
    }
    for mode, runs in locate.items():
        print(
            f"| {names[mode]} | {_median(runs, 'failing_run_s'):.3f} | "
            f"{_median(runs, 'py_func_calls'):.0f} | {runs[-1]['first_line'][:70]} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
