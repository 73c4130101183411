"""Examples/s of one legacy input read through the tf.data service, against local reading.

The input: a filename queue over 8 CSV files (25,000 lines each), a TextLineReader,
decode_csv and `batch(..., 128)`, read to its end (2 epochs). Side by side, each in its own
process: TensorFlow's own queues, hand-written tf.data, compat_input in the process, and
compat_input through `compat-input serve` with 1 and 2 workers (their own processes, on
this same machine). Medians of `--repeats` runs.

    python benchmarks/service.py [--repeats 3]
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
ROOT = os.path.dirname(HERE)

_READ = r"""
import json, sys, time
import tensorflow as tf
tf1 = tf.compat.v1; tf1.disable_v2_behavior()  # TF1 behaviour, where users run
mode, files = sys.argv[1], sys.argv[2:]
if mode == "tfdata":
    lines = tf.data.TextLineDataset(files).repeat(2)
    rows = lines.map(lambda l: tuple(tf1.decode_csv(l, [[0], [0]])), 2).batch(128).prefetch(2)
    it = tf1.data.make_initializable_iterator(rows)
    batch, start = it.get_next(), it.initializer
else:
    if mode == "legacy":
        train, readers = tf1.train, tf1
    else:
        import compat_input as train, compat_input as readers
    queue = train.string_input_producer(files, num_epochs=2, shuffle=False)
    _, line = readers.TextLineReader().read(queue)
    a, b = tf1.decode_csv(line, [[0], [0]])
    batch, start = train.batch([a, b], 128, num_threads=2, allow_smaller_final_batch=True), None
with tf1.Session() as sess:
    sess.run(tf1.local_variables_initializer())
    coord = tf1.train.Coordinator()
    threads = [] if start is not None else train.start_queue_runners(sess, coord)
    t0, n = time.perf_counter(), 0
    if start is not None:
        sess.run(start)
    try:
        while True:
            n += len(sess.run(batch)[0])
    except tf.errors.OutOfRangeError:
        pass
    seconds = time.perf_counter() - t0
    coord.request_stop()
print(json.dumps({"examples": n, "per_s": n / seconds}))
"""


def _env(service: str = "") -> dict:
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT, COMPAT_INPUT_SERVICE=service)


def _read(mode: str, files: list, service: str = "") -> dict:
    command = [sys.executable, "-c", _READ, mode, *files]
    return json.loads(data.last_line(command, mode, env=_env(service)))


def _serve(workers: int):
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "compat_input._src.commands.cli",
            "serve",
            "--port",
            "0",
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    return process, process.stdout.readline().strip()  # The address alone, on its own line.


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sides = ["legacy", "tfdata", "compat", "service, 1 worker", "service, 2 workers"]
    runs = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as root:
        files = []
        for i in range(8):
            files.append(f"{root}/part{i}.csv")
            with open(files[-1], "w") as f:
                f.write("".join(f"{i * 100_000 + j},{j % 7}\n" for j in range(25_000)))
        services = {side: _serve(w) for side, w in ((sides[3], 1), (sides[4], 2))}
        try:
            for _ in range(args.repeats):  # Interleaved, so machine noise falls on every side.
                for side in sides:
                    mode = side if side in ("legacy", "tfdata") else "compat"
                    service = services[side][1] if side in services else ""
                    runs[side].append(_read(mode, files, service))
        finally:
            for process, _ in services.values():
                process.kill()
    print(
        f"## One input through the tf.data service (400,000 examples, medians of {args.repeats}, "
        "TF1 behaviour)\n"
    )
    print("| | examples/s | examples read |")
    print("|---|---|---|")
    for side, results in runs.items():
        per_s = statistics.median(r["per_s"] for r in results)
        print(f"| {side} | {per_s:,.0f} | {results[-1]['examples']:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
