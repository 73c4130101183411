"""What seeing the input costs a step: the fill counts and the read clock, per read.

One process, TF1 behaviour, a `batch` of 20 cheap examples read by a one-op model, so that
a read's own overhead is most of the step (`--model trainer`: the tiny trainer's model, a
matmul and its gradient step, as benchmarks/whole_programs/tiny_trainer.py): legacy queues,
and compat_input under `install()` (as `compat-input run` runs it) three ways: untimed
(`configure(input_waits=False)`), reads timed in sampled runs (the default), and every
read timed in its step (`input_wait_summaries=True`); `--programs` of each
compat_input mode, each its own graph and session kept open, run in rounds of chunks, each
round in another order; each figure is the median of `--repeats` chunks of `--steps` steps,
in microseconds a step, then each program's. Whole programs, the same change measured
between revisions: benchmarks/revisions.py.

    python benchmarks/fill_levels.py [--repeats 40] [--steps 500] [--programs 2] [--model read]
        [--world tf1]
"""

import argparse
import statistics
import time

import tensorflow as tf

tf1 = tf.compat.v1


class _Program:
    """A graph and session kept open: the modes' runs alternate chunk by chunk, so that
    the machine's drift hits them alike (whole processes spread 70-160 us a step here)."""

    def __init__(self, api, model: str):
        self.graph = tf.Graph()
        with self.graph.as_default():
            x = tf.cast(api.range_input_producer(10**7, shuffle=False).dequeue(), tf.float32)
            if model == "read":
                batch = api.batch([x], 20, capacity=200)
                loss = tf.reduce_sum(batch)
            else:  # The tiny trainer's model (benchmarks/whole_programs/tiny_trainer.py).
                features, label = api.batch([tf.fill([9], x), x], 20, capacity=200)
                weights = tf1.get_variable("w", [9, 1], initializer=tf1.zeros_initializer())
                error = tf.matmul(features / 1e7, weights)[:, 0] - label / 1e7
                loss = tf1.train.GradientDescentOptimizer(0.01).minimize(tf.reduce_mean(error**2))
            self.sess = tf1.Session()
            self.sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            self.coord = tf1.train.Coordinator()
            self.threads = api.start_queue_runners(self.sess, coord=self.coord)
            self.run = self.sess.make_callable(loss)
        for _ in range(200):
            self.run()

    def chunk_us(self, steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            self.run()
        return (time.perf_counter() - start) / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument(
        "--world",
        choices=("tf1", "tf2"),
        default="tf1",
        help="tf1: TF1 behaviour, as `compat-input run`; tf2: TF2 behaviour, eager execution off",
    )
    parser.add_argument("--programs", type=int, default=2, help="programs of each mode")
    parser.add_argument(
        "--model",
        choices=("read", "trainer"),
        default="read",
        help="read: a one-op model, the read's own cost; trainer: the tiny trainer's step",
    )
    args = parser.parse_args()
    (tf1.disable_v2_behavior if args.world == "tf1" else tf1.disable_eager_execution)()
    import compat_input

    # `--programs` programs of each mode, built alternately, and each round runs them in
    # another order: two programs of one mode differ by 4-35 us a step here, which, one
    # program a mode, an earlier version of this benchmark took for the clock's cost.
    programs: dict = {"legacy queues": [_Program(tf1.train, args.model)]}
    compat_input.install()  # As `compat-input run` runs programs: runs timed and sampled.
    modes = {  # configure() of each mode's builds.
        "compat_input, input_waits=False": dict(input_waits=False),
        "compat_input, sampled runs' reads timed (default)": {},
        "compat_input, every read timed (input_wait_summaries=True)": dict(
            input_wait_summaries=True
        ),
    }
    for k in range(args.programs):
        for mode, settings in list(modes.items())[:: 1 if k % 2 == 0 else -1]:
            compat_input.configure(
                **{"input_waits": True, "input_wait_summaries": False, **settings}
            )
            programs.setdefault(mode, []).append(_Program(compat_input, args.model))
    compat_input.configure(input_waits=True, input_wait_summaries=False)
    times: dict = {mode: [[] for _ in built] for mode, built in programs.items()}
    turns = [(p, chunks) for mode in programs for p, chunks in zip(programs[mode], times[mode])]
    for round_ in range(args.repeats):
        shift = round_ % len(turns)
        for program, chunks in turns[shift:] + turns[:shift]:
            chunks.append(program.chunk_us(args.steps))
    world = "TF1 behaviour" if args.world == "tf1" else "TF2 behaviour, eager execution off"
    print(f"us a step (medians of {args.repeats} chunks of {args.steps} steps, {world})\n")
    print("| mode | us a step | middle half of the chunks | each program (build order) |")
    print("|---|---|---|---|")
    for mode, per_program in times.items():
        values = [v for chunks in per_program for v in chunks]
        q = statistics.quantiles(values, n=4)
        each = " / ".join(f"{statistics.median(chunks):.1f}" for chunks in per_program)
        print(f"| {mode} | {statistics.median(values):.1f} | {q[0]:.0f}-{q[2]:.0f} | {each} |")
    for program in (p for built in programs.values() for p in built):
        program.coord.request_stop()
        program.coord.join(program.threads)
        program.sess.close()


if __name__ == "__main__":
    main()
