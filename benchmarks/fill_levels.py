"""What seeing the input costs a step: the fill counts and the read clock, per read.

One process, TF1 behaviour, a `batch` of 20 cheap examples read by a one-op model, so that
a read's own overhead is most of the step: legacy queues, compat_input with reads timed (the
default), and compat_input with `configure(input_waits=False)`, `--programs` of each
compat_input mode, each its own graph and session kept open, run in rounds of chunks, each
round in another order; each figure is the median of `--repeats` chunks of `--steps` steps,
in microseconds a step, then each program's. Whole programs, the same change measured
between revisions: benchmarks/revisions.py.

    python benchmarks/fill_levels.py [--repeats 40] [--steps 500] [--programs 2]
"""

import argparse
import statistics
import time

import tensorflow as tf

tf1 = tf.compat.v1


class _Program:
    """A graph and session kept open: the modes' runs alternate chunk by chunk, so that
    the machine's drift hits them alike (whole processes spread 70-160 us a step here)."""

    def __init__(self, api):
        self.graph = tf.Graph()
        with self.graph.as_default():
            x = api.range_input_producer(10**7, shuffle=False).dequeue()
            batch = api.batch([tf.cast(x, tf.float32)], 20, capacity=200)
            loss = tf.reduce_sum(batch)
            self.sess = tf1.Session()
            self.sess.run(tf1.local_variables_initializer())
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
    parser.add_argument("--programs", type=int, default=2, help="programs of each mode")
    args = parser.parse_args()
    tf1.disable_v2_behavior()
    import compat_input

    # `--programs` programs of each mode, built alternately, and each round runs them in
    # another order: two programs of one mode differ by 4-35 us a step here, which, one
    # program a mode, an earlier version of this benchmark took for the clock's cost.
    programs: dict = {"legacy queues": [_Program(tf1.train)]}
    for timed in [k % 4 in (1, 2) for k in range(2 * args.programs)]:
        compat_input.configure(input_waits=timed)
        mode = "compat_input, reads timed (default)" if timed else "compat_input, input_waits=False"
        programs.setdefault(mode, []).append(_Program(compat_input))
    compat_input.configure(input_waits=True)
    times: dict = {mode: [[] for _ in built] for mode, built in programs.items()}
    turns = [(p, chunks) for mode in programs for p, chunks in zip(programs[mode], times[mode])]
    for round_ in range(args.repeats):
        shift = round_ % len(turns)
        for program, chunks in turns[shift:] + turns[:shift]:
            chunks.append(program.chunk_us(args.steps))
    print(f"us a step (medians of {args.repeats} chunks of {args.steps} steps, TF1 behaviour)\n")
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
