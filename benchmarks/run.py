"""Benchmarks: one legacy program, three ways, side by side.

For each workload the same graph-building code runs on (a) TensorFlow's own queues,
(b) compat_input, and (c) the pipeline written by hand in idiomatic tf.data. Every
measurement runs in its own process (so peak memory is its own), the three ways are
interleaved, and each figure is the median of `--repeats` runs. Results go to
benchmarks/results/results.md (and results.json).

    python benchmarks/run.py [--repeats 3] [--batches 60] [--only csv,image]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
BATCH = 128
WORKLOADS = ["csv", "image", "fixed", "preloaded", "join", "validation"]
MODES = ["legacy", "compat", "tfdata"]


# -- data ----------------------------------------------------------------------------------


def make_data(root: str) -> dict:
    import tensorflow as tf

    rng = np.random.default_rng(0)
    paths = {"csv": [], "tfr": [], "bin": []}
    for shard in range(4):
        path = os.path.join(root, f"part{shard}.csv")
        rows = rng.integers(0, 1000, size=(25000, 10))
        np.savetxt(path, rows, fmt="%d", delimiter=",")
        paths["csv"].append(path)
        path = os.path.join(root, f"img{shard}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(2500):
                image = rng.integers(0, 255, size=32 * 32 * 3, dtype=np.uint8).tobytes()
                feature = {
                    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                }
                writer.write(
                    tf.train.Example(
                        features=tf.train.Features(feature=feature)
                    ).SerializeToString()
                )
        paths["tfr"].append(path)
        path = os.path.join(root, f"cifar{shard}.bin")
        with open(path, "wb") as f:
            f.write(rng.integers(0, 255, size=3073 * 2500, dtype=np.uint8).tobytes())
        paths["bin"].append(path)
    return paths


# -- the legacy programs (api = tf.compat.v1.train + readers, or compat_input) -------------


def _image(serialized, tf):
    parsed = tf.io.parse_single_example(
        serialized,
        {
            "image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8), [32, 32, 3])
    image = tf.image.random_crop(tf.cast(image, tf.float32), [28, 28, 3])
    image = tf.image.random_flip_left_right(image)
    return tf.image.per_image_standardization(image), parsed["label"]


def legacy_program(workload: str, api, paths: dict, tf):
    tf1 = tf.compat.v1
    if workload == "csv":
        queue = api.string_input_producer(paths["csv"])
        _, line = api.TextLineReader().read(queue)
        columns = tf1.decode_csv(line, [[0]] * 10)
        return api.shuffle_batch(
            [tf.stack(columns[1:]), columns[0]],
            BATCH,
            capacity=1000 + 3 * BATCH,
            min_after_dequeue=1000,
            num_threads=2,
        )
    if workload == "image":
        queue = api.string_input_producer(paths["tfr"])
        _, serialized = api.TFRecordReader().read(queue)
        image, label = _image(serialized, tf)
        return api.shuffle_batch(
            [image, label], BATCH, capacity=1000 + 3 * BATCH, min_after_dequeue=1000, num_threads=2
        )
    if workload == "fixed":
        queue = api.string_input_producer(paths["bin"])
        _, record = api.FixedLengthRecordReader(3073).read(queue)
        raw = tf.io.decode_raw(record, tf.uint8)
        label = tf.cast(raw[0], tf.int32)
        image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
        return api.batch(
            [tf.cast(image, tf.float32) / 255.0, label], BATCH, num_threads=2, capacity=4 * BATCH
        )
    if workload == "preloaded":
        images = tf.constant(np.random.default_rng(1).random((20000, 64), dtype=np.float32))
        labels = tf.constant(np.arange(20000, dtype=np.int32) % 10)
        image, label = api.slice_input_producer([images, labels])
        return api.batch([image * 2.0, label], BATCH, capacity=4 * BATCH)
    if workload == "join":
        queue = api.string_input_producer(paths["tfr"])
        lists = []
        for _ in range(2):
            _, serialized = api.TFRecordReader().read(queue)
            lists.append(list(_image(serialized, tf)))
        return api.batch_join(lists, BATCH, capacity=4 * BATCH)
    raise ValueError(workload)


def tfdata_program(workload: str, paths: dict, tf):
    """The same input written by hand in idiomatic tf.data (what a migration would write)."""
    tf1 = tf.compat.v1
    auto = tf.data.AUTOTUNE
    files = None
    if workload == "csv":
        files = tf.data.Dataset.from_tensor_slices(paths["csv"]).shuffle(4).repeat()
        lines = files.interleave(tf.data.TextLineDataset, cycle_length=2, num_parallel_calls=auto)

        def parse(line):
            columns = tf.io.decode_csv(line, [[0]] * 10)
            return tf.stack(columns[1:], axis=-1), columns[0]

        # Whole batches parsed at once: decode_csv is a batch op.
        dataset = lines.shuffle(1000 + BATCH).batch(BATCH, drop_remainder=True).map(parse, auto)
    elif workload in ("image", "join"):
        files = tf.data.Dataset.from_tensor_slices(paths["tfr"]).shuffle(4).repeat()
        records = files.interleave(tf.data.TFRecordDataset, cycle_length=2, num_parallel_calls=auto)
        dataset = records.map(lambda s: _image(s, tf), auto)
        if workload == "image":
            dataset = dataset.shuffle(1000 + BATCH)
        dataset = dataset.batch(BATCH, drop_remainder=True)
    elif workload == "fixed":
        files = tf.data.Dataset.from_tensor_slices(paths["bin"]).shuffle(4).repeat()
        records = files.interleave(
            lambda f: tf.data.FixedLengthRecordDataset(f, 3073),
            cycle_length=2,
            num_parallel_calls=auto,
        )

        def decode(record):
            raw = tf.io.decode_raw(record, tf.uint8)
            image = tf.transpose(tf.reshape(raw[1:], [3, 32, 32]), [1, 2, 0])
            return tf.cast(image, tf.float32) / 255.0, tf.cast(raw[0], tf.int32)

        dataset = records.map(decode, auto).batch(BATCH, drop_remainder=True)
    elif workload == "preloaded":
        images = np.random.default_rng(1).random((20000, 64), dtype=np.float32)
        labels = np.arange(20000, dtype=np.int32) % 10
        dataset = (
            tf.data.Dataset.from_tensor_slices((images, labels))
            .shuffle(20000)
            .repeat()
            .map(lambda i, lb: (i * 2.0, lb), auto)
            .batch(BATCH, drop_remainder=True)
        )
    else:
        raise ValueError(workload)
    iterator = tf1.data.make_initializable_iterator(dataset.prefetch(auto))
    tf1.add_to_collection("bench_init", iterator.initializer)
    return iterator.get_next()


# -- one measurement (runs in its own process) ---------------------------------------------


def measure(workload: str, mode: str, data_root: str, batches: int) -> dict:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf

    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    tf.get_logger().setLevel("ERROR")
    import compat_input

    paths = json.load(open(os.path.join(data_root, "paths.json")))
    if workload == "validation":
        return measure_validation(mode, tf, compat_input)
    api = _api(mode, tf, compat_input)

    def program():
        if mode == "tfdata":
            return tfdata_program(workload, paths, tf)
        return legacy_program(workload, api, paths, tf)

    with tf.Graph().as_default():
        program()  # One-time costs of a process (first tf.data tracing) are not per pipeline.
    graph = tf.Graph()
    with graph.as_default():
        start = time.perf_counter()
        fetches = program()
        build = time.perf_counter() - start
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            sess.run(tf1.get_collection("bench_init"))
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            run = sess.make_callable(fetches)
            for _ in range(10):
                run()
            start = time.perf_counter()
            for _ in range(batches):
                run()
            elapsed = time.perf_counter() - start
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"examples_per_s": batches * BATCH / elapsed, "build_s": build, "peak_mb": peak}


def _api(mode, tf, compat_input):
    import types

    tf1 = tf.compat.v1
    if mode == "compat":
        return compat_input
    names = (
        "batch batch_join shuffle_batch string_input_producer slice_input_producer "
        "range_input_producer".split()
    )
    api = {n: getattr(tf1.train, n) for n in names}
    api.update(
        {
            n: getattr(tf1, n)
            for n in ("TextLineReader", "TFRecordReader", "FixedLengthRecordReader")
        }
    )
    return types.SimpleNamespace(**api)


def measure_validation(mode: str, tf, compat_input) -> dict:
    """A full validation pass: compat_input.iterate vs the legacy new-session workaround."""
    tf1 = tf.compat.v1
    rng = np.random.default_rng(2)
    data = rng.random((5000, 32), dtype=np.float32)
    ckpt_dir = tempfile.mkdtemp()
    if mode == "tfdata":
        return {"examples_per_s": float("nan"), "build_s": float("nan"), "peak_mb": float("nan")}
    api = compat_input if mode == "compat" else _api("legacy", tf, compat_input)
    graph = tf.Graph()
    with graph.as_default():
        w = tf1.Variable(tf.ones([32, 1]))
        (row,) = api.slice_input_producer([tf.constant(data)], num_epochs=1, shuffle=False)
        batch = api.batch([row], BATCH, allow_smaller_final_batch=True)
        loss = tf.reduce_sum(tf.matmul(batch, w))
        saver = tf1.train.Saver([w])
        init = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        times = []
        with tf1.Session() as sess:
            sess.run(init)
            saver.save(sess, os.path.join(ckpt_dir, "m"))
            if mode == "compat":
                compat_input.start_queue_runners(sess)
                for _ in range(5):
                    start = time.perf_counter()
                    total = sum(float(v) for v in compat_input.iterate(sess, loss))
                    times.append(time.perf_counter() - start)
        if mode == "legacy":
            for _ in range(5):
                start = time.perf_counter()
                with tf1.Session() as sess:  # The workaround: new session, restore, start.
                    sess.run(tf1.local_variables_initializer())
                    saver.restore(sess, tf1.train.latest_checkpoint(ckpt_dir))
                    coord = tf1.train.Coordinator()
                    threads = tf1.train.start_queue_runners(sess, coord)
                    total = 0.0
                    try:
                        while True:
                            total += float(sess.run(loss))
                    except tf.errors.OutOfRangeError:
                        pass
                    coord.request_stop()
                    coord.join(threads)
                times.append(time.perf_counter() - start)
    del total
    seconds = statistics.median(times)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"examples_per_s": len(data) / seconds, "build_s": seconds, "peak_mb": peak}


# -- driver --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--measure", nargs=3, metavar=("WORKLOAD", "MODE", "DATA"))
    args = parser.parse_args()
    if args.measure:
        workload, mode, root = args.measure
        print(json.dumps(measure(workload, mode, root, args.batches)))
        return 0

    os.makedirs(RESULTS, exist_ok=True)
    root = tempfile.mkdtemp(prefix="compat_input_bench_")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    paths = make_data(root)
    json.dump(paths, open(os.path.join(root, "paths.json"), "w"))
    workloads = args.only.split(",")
    samples = {(w, m): [] for w in workloads for m in MODES}
    for repeat in range(args.repeats):
        for w in workloads:
            for m in MODES:  # Interleaved: drift hits every mode alike.
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--batches",
                        str(args.batches),
                        "--measure",
                        w,
                        m,
                        root,
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                samples[(w, m)].append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(
                    f"[{repeat + 1}/{args.repeats}] {w:10s} {m:7s} {samples[(w, m)][-1]}",
                    flush=True,
                )
    table = _table(samples, workloads)
    if set(workloads) != set(WORKLOADS):
        print(table)  # A partial run does not replace the full results.
        return 0
    with open(os.path.join(RESULTS, "results.md"), "w") as f:
        f.write(table)
    with open(os.path.join(RESULTS, "results.json"), "w") as f:
        json.dump({f"{w}/{m}": v for (w, m), v in samples.items()}, f, indent=1)
    _chart(samples, workloads)
    print(table)
    return 0


def _chart(samples: dict, workloads: list) -> None:
    """benchmarks/results/results.png: examples/s per workload, the three ways side by side."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (make bench installs it)")
        return
    shown = [w for w in workloads if w != "validation"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.27
    for i, mode in enumerate(MODES):
        values = [_median(samples[(w, mode)], "examples_per_s") for w in shown]
        bars = ax.bar([x + (i - 1) * width for x in range(len(shown))], values, width, label=mode)
        ax.bar_label(bars, labels=[f"{v / 1000:.0f}k" for v in values], fontsize=7)
    ax.set_xticks(range(len(shown)), shown)
    ax.set_ylabel("examples / s (median)")
    ax.set_yscale("log")
    ax.set_title(f"legacy queues vs compat_input vs hand-written tf.data (batch {BATCH})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "results.png"), dpi=120)


def _median(samples, key):
    return statistics.median(s[key] for s in samples)


def _table(samples: dict, workloads: list) -> str:
    lines = [
        f"Medians of {len(next(iter(samples.values())))} runs, batch {BATCH}, "
        f"{os.cpu_count()} cores. 'validation' is one full pass over 5,000 examples: "
        "compat_input.iterate in the running session vs legacy's new session + restore + "
        "start queues (its 'build s' column is seconds per pass).",
        "",
        "| workload | legacy ex/s | compat ex/s | tf.data ex/s | compat / legacy | compat / tf.data "
        "| build s (legacy, compat) | peak MB (legacy, compat, tf.data) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w in workloads:
        med = {
            m: {k: _median(samples[(w, m)], k) for k in ("examples_per_s", "build_s", "peak_mb")}
            for m in MODES
        }
        leg, com, tfd = (med[m]["examples_per_s"] for m in MODES)
        lines.append(
            f"| {w} | {leg:,.0f} | {com:,.0f} | {tfd:,.0f} | {com / leg:.2f}x | "
            f"{com / tfd if tfd == tfd else float('nan'):.2f}x | "
            f"{med['legacy']['build_s']:.3f}, {med['compat']['build_s']:.3f} | "
            f"{med['legacy']['peak_mb']:.0f}, {med['compat']['peak_mb']:.0f}, {med['tfdata']['peak_mb']:.0f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
