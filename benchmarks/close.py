"""How long the end takes: `managed_session` exit (the session's close), legacy against
compat_input, over enough runs to see an intermittent stall.

The program has the shape of the PTB tutorial's end: three `range_input_producer` inputs
and strided slices of a word-id matrix, the graph exported with `export_meta_graph` and
imported into a new graph, a `Supervisor`'s `managed_session` that runs the steps for
`--seconds`, then exits. The close is timed around `Session.close` in the process; the
stall it measures came from an iterator whose tf.data tuning thread slept out its period
(which grows the longer the program runs) in the iterator's destructor.

Each run is its own process, modes interleaved; TF1 behaviour (`compat-input run` and
`--legacy`).

    python benchmarks/close.py [--runs 5] [--seconds 20]
"""

import argparse
import os
import statistics
import tempfile

import data

_PROGRAM = r"""
import sys, tempfile, time
import numpy as np
import tensorflow as tf
from tensorflow.python.client import session as session_lib
tf1 = tf.compat.v1
seconds = float(sys.argv[1])
closes = []
_close = session_lib.BaseSession.close
def timed_close(self):
    start = time.perf_counter()
    _close(self)
    closes.append(time.perf_counter() - start)
session_lib.BaseSession.close = timed_close
names = []
with tf.Graph().as_default():
    for name, steps in (("Train", 20), ("Valid", 20), ("Test", 1)):
        with tf1.name_scope(name):
            data = tf.constant(np.arange(200_000, dtype=np.int32).reshape(20, 10_000))
            i = tf1.train.range_input_producer(10_000 // steps - 1, shuffle=False).dequeue()
            x = tf.strided_slice(data, [0, i * steps], [20, (i + 1) * steps])
            names.append(tf.reduce_sum(x, name="total").name)
    tf1.train.get_or_create_global_step()
    meta = tf1.train.export_meta_graph()
with tf.Graph().as_default() as graph:
    tf1.train.import_meta_graph(meta)
    totals = [graph.get_tensor_by_name(n) for n in names]
    sv = tf1.train.Supervisor(logdir=tempfile.mkdtemp(), save_model_secs=0,
                              save_summaries_secs=0)
    with sv.managed_session() as sess:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            sess.run(totals)
print("CLOSE", max(closes))
"""


def _run(mode: str, seconds: float, folder: str) -> float:
    program = os.path.join(folder, "close_program.py")
    with open(program, "w") as f:
        f.write(_PROGRAM)
    line = data.last_line(data.runner(mode) + [program, str(seconds)], mode, "CLOSE")
    return float(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    times: dict = {"legacy": [], "compat": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.runs):
            for mode in times:
                times[mode].append(_run(mode, args.seconds, folder))
    print(
        f"Session close at `managed_session` exit after {args.seconds:.0f} s of steps, "
        f"{args.runs} runs each, interleaved, TF1 behaviour, seconds:\n"
    )
    print("| mode | median | max | every run |")
    print("|---|---|---|---|")
    for mode, values in times.items():
        every = ", ".join(f"{v:.3f}" for v in values)
        print(f"| {mode} | {statistics.median(values):.3f} | {max(values):.3f} | {every} |")


if __name__ == "__main__":
    main()
