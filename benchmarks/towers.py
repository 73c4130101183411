"""Many inputs in one graph: the graph build, start and first batch of N per-tower inputs
(a producer, a TextLineReader, decode_csv, shuffle_batch each), as multi-tower and
per-file programs build them, on legacy queues, on compat_input and written by hand in
tf.data. TF1 behaviour. Each run is its own process; modes interleaved, medians.

    python benchmarks/towers.py [--towers 50] [--repeats 3]      (results/towers.md)

Issue 51's budget: the build at most 1.5x legacy's.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import data

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["legacy", "compat", "tfdata"]


def tower_program(mode: str, towers: int, root: str) -> None:
    """One run: prints build, start (to the first batch of every tower) and ops, as JSON."""
    import gc
    import time

    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_v2_behavior()
    if mode == "compat":
        import compat_input

        train = readers = compat_input
    else:
        train, readers = tf1.train, tf1
    # Importing TensorFlow leaves a full garbage collection due; every mode pays it here.
    gc.collect()
    began = time.perf_counter()
    fetches, iterators = [], []
    for i in range(towers):
        path = os.path.join(root, f"t{i}.csv")
        with tf1.name_scope(f"tower{i}"):
            if mode == "tfdata":
                rows = tf.data.TextLineDataset([path]).repeat()
                rows = rows.map(lambda line: tuple(tf1.decode_csv(line, [[0], [0]])), 2)
                it = tf1.data.make_initializable_iterator(rows.shuffle(100).batch(32).prefetch(3))
                iterators.append(it)
                fetches.append(it.get_next())
                continue
            queue = train.string_input_producer([path], shuffle=False)
            _, line = readers.TextLineReader().read(queue)
            a, b = tf1.decode_csv(line, [[0], [0]])
            fetches.append(train.shuffle_batch([a, b], 32, 200, 100, num_threads=2))
    built = time.perf_counter() - began
    ops = len(tf1.get_default_graph().get_operations())
    sess = tf1.Session()
    sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
    began = time.perf_counter()
    if mode == "tfdata":
        sess.run([it.initializer for it in iterators])
    else:
        train.start_queue_runners(sess, tf1.train.Coordinator())
    sess.run(fetches)
    started = time.perf_counter() - began
    print(json.dumps({"build_s": built, "start_s": started, "ops": ops}), flush=True)
    os._exit(0)  # The close is benchmarks/close.py's to time.


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--towers", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "ROOT"))
    args = parser.parse_args()
    if args.worker:
        tower_program(args.worker[0], args.towers, args.worker[1])
        return 0
    data.bytecode_as_installed()
    root = tempfile.mkdtemp(prefix="compat_input_towers_")
    for i in range(args.towers):
        with open(os.path.join(root, f"t{i}.csv"), "w") as f:
            f.write("".join(f"{k},{k * 2}\n" for k in range(1000)))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    samples: dict = {m: [] for m in MODES}
    for repeat in range(args.repeats):
        for mode in MODES:  # Interleaved: drift hits every mode alike.
            cmd = [sys.executable, __file__, "--towers", str(args.towers)]
            out = subprocess.run(
                cmd + ["--worker", mode, root], capture_output=True, text=True, env=env
            )
            if out.returncode != 0:
                raise RuntimeError(f"{mode} failed:\n{out.stderr[-3000:]}")
            samples[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"[{repeat + 1}/{args.repeats}] {mode:7s} {samples[mode][-1]}", flush=True)

    def median(mode: str, key: str) -> float:
        return statistics.median(s[key] for s in samples[mode])

    lines = [
        f"{args.towers} per-tower inputs in one graph (producer, TextLineReader, decode_csv, "
        f"shuffle_batch), medians of {args.repeats} runs, modes interleaved, {os.cpu_count()} "
        "cores, **TF1 behaviour**. Start: `start_queue_runners` (tf.data: the initializers) "
        "to every tower's first batch.",
        "",
        "| mode | build (s) | build vs legacy | start + first batch (s) | ops in the graph |",
        "|---|---|---|---|---|",
    ]
    for mode in MODES:
        lines.append(
            f"| {mode} | {median(mode, 'build_s'):.2f} "
            f"| {median(mode, 'build_s') / median('legacy', 'build_s'):.2f}x "
            f"| {median(mode, 'start_s'):.2f} | {int(median(mode, 'ops'))} |"
        )
    table = "\n".join(lines) + "\n"
    print(table)
    with open(os.path.join(HERE, "results", "towers.md"), "w") as f:
        f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
