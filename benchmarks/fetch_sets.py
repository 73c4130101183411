"""What a new set of fetches costs a session beside the input: legacy against compat_input.

Every distinct `Session.run` a program makes (a Supervisor's start makes about ten: the
initializers, its ready checks, the global step read by each service thread, a summary, a
save) pays the session's rewrite of the graph again. That rewrite (Grappler) carries the
graph's whole function library whatever the run prunes, about 20 us an op of it on this
machine: legacy's queues add no function, compat_input's datasets and start functions do.
Timed here: a constant fetched anew, after the input's start, in a graph holding only the
input (the CIFAR-10 tutorial's, seeded and not; youtube-8m's shape, `read_up_to` readers
into `shuffle_batch_join`). Each run is its own process, modes interleaved; medians.
TF1 behaviour (`compat-input run` and `--legacy`); `--world tf2`: TF2 behaviour with
install() (benchmarks/tf2_world.py).

    python benchmarks/fetch_sets.py [--runs 3] [--world tf1|tf2]
"""

import argparse
import os
import statistics
import tempfile

import data
import numpy as np

_PROGRAM = r"""
import glob, os, sys, time
import tensorflow as tf
root, shape, seeded = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if seeded:
    tf.set_random_seed(1)
if shape == "cifar10":
    queue = tf.train.string_input_producer(sorted(glob.glob(os.path.join(root, "cifar*.bin"))))
    _, value = tf.FixedLengthRecordReader(record_bytes=1 + 32 * 32 * 3).read(queue)
    raw = tf.decode_raw(value, tf.uint8)
    label = tf.cast(tf.strided_slice(raw, [0], [1]), tf.int32)
    image = tf.reshape(tf.strided_slice(raw, [1], [1 + 32 * 32 * 3]), [3, 32, 32])
    image = tf.random_crop(tf.cast(tf.transpose(image, [1, 2, 0]), tf.float32), [24, 24, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=63)
    image = tf.image.random_contrast(image, lower=0.2, upper=1.8)
    image = tf.image.per_image_standardization(image)
    image.set_shape([24, 24, 3])
    label.set_shape([1])
    batch = tf.train.shuffle_batch([image, label], 128, 2000, 1000, num_threads=16)
else:
    queue = tf.train.string_input_producer(sorted(glob.glob(os.path.join(root, "video-*"))))
    blocks = []
    for _ in range(4):
        _, serialized = tf.TFRecordReader().read_up_to(queue, num_records=1024)
        parsed = tf.parse_example(serialized, {"mean_rgb": tf.FixedLenFeature([1024], tf.float32)})
        blocks.append([serialized, parsed["mean_rgb"]])
    batch = tf.train.shuffle_batch_join(blocks, 256, 1280, 256, enqueue_many=True)
fetches = [tf.constant(float(k)) + 1.0 for k in range(8)]
library = sum(len(f.node_def) for f in tf.get_default_graph().as_graph_def().library.function)
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    sess.run(batch)
    time.sleep(3)  # The input's buffers full: its threads idle, as the timed runs need.
    costs = []
    for fetch in fetches:
        start = time.perf_counter()
        sess.run(fetch)
        costs.append(time.perf_counter() - start)
    coord.request_stop()
    coord.join(threads)
costs.sort()
print("FETCH", costs[len(costs) // 2], library)
"""


def _run(mode: str, shape: str, seeded: bool, root: str, program: str, world: str) -> tuple:
    command = data.runner(mode, world) + [program, root, shape, "1" if seeded else "0"]
    _, seconds, library = data.last_line(command, f"{mode} {shape}", "FETCH").split()
    return float(seconds), int(library)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--world", choices=["tf1", "tf2"], default="tf1")
    args = parser.parse_args()
    cases = [("cifar10", False), ("cifar10", True), ("video", False)]
    times: dict = {(c, m): [] for c in cases for m in ("legacy", "compat")}
    library: dict = {}
    with tempfile.TemporaryDirectory() as root:
        rng = np.random.default_rng(0)
        for shard in range(4):
            data.cifar_shard(root, rng, shard)
            data.video_shard(root, rng, shard)
        program = os.path.join(root, "fetch_sets_program.py")
        with open(program, "w") as f:
            f.write(_PROGRAM)
        for _ in range(args.runs):
            for case in cases:
                for mode in ("legacy", "compat"):
                    seconds, ops = _run(mode, *case, root, program, args.world)
                    times[(case, mode)].append(seconds)
                    library[(case, mode)] = ops
    print(
        f"A constant fetched anew after the input's start (median of 8 fetches a run, "
        f"median of {args.runs} runs, interleaved), {args.world.upper()} behaviour, "
        f"milliseconds; the "
        f"graph's function library in ops:\n"
    )
    print("| input | seed | legacy ms | compat ms | compat - legacy | library ops (compat) |")
    print("|---|---|---|---|---|---|")
    for case in cases:
        legacy = statistics.median(times[(case, "legacy")]) * 1000
        compat = statistics.median(times[(case, "compat")]) * 1000
        seed = "seeded" if case[1] else "unseeded"
        ops = library[(case, "compat")]
        print(
            f"| {case[0]} | {seed} | {legacy:.2f} | {compat:.2f} | {compat - legacy:+.2f} | {ops} |"
        )


if __name__ == "__main__":
    main()
