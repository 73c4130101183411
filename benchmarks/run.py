"""Benchmarks: unmodified TF1 programs, three ways, side by side, where users run them.

Each workload is a TF1 program file in benchmarks/programs/ (`import tensorflow as tf`,
`tf.train.shuffle_batch`, `tf.Session`), run as its own process:

- legacy:  `compat-input run --legacy PROGRAM`: TensorFlow's own queues;
- compat:  `compat-input run PROGRAM`: compat_input, as a user runs it;
- tf.data: `compat-input run --legacy PROGRAM_tfdata`: the same input written by hand in
  idiomatic tf.data (nothing of compat_input in play).

All three run in TF1 behaviour (`compat-input run` calls disable_v2_behavior()), the world
every user program runs in. `--worlds tf1,tf2` adds a second column: the same programs in
TF2 behaviour with eager execution off and compat_input.install() (code converted by
tf_upgrade_v2), through benchmarks/tf2_world.py. Modes are interleaved (drift hits them
alike); each figure is the median of `--repeats` runs; peak memory is each process's own.
Results go to benchmarks/results/results.md (and results.json, results.png).

    python benchmarks/run.py [--repeats 3] [--steps 200] [--only csv,jpeg] [--worlds tf1,tf2]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import data
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
RESULTS = os.path.join(HERE, "results")
# (workload, what its program does); `step` times training steps of a tiny model.
WORKLOADS = {
    "csv": "TextLineReader + decode_csv + shuffle_batch(2 threads)",
    "fixed": "FixedLengthRecordReader + decode_raw + batch(2 threads)",
    "cifar": "CIFAR-10 tutorial: fixed-length + crop, flip, brightness, contrast, "
    "standardization + shuffle_batch(16 threads)",
    "cifar_seeded": "the same program with tf.set_random_seed(1), as most programs seed",
    "image": "TFRecordReader + parse_single_example + crop, flip, standardization + "
    "shuffle_batch(2 threads)",
    "jpeg": "WholeFileReader + decode_jpeg + resize + crop + flip + shuffle_batch(4 threads)",
    "jpeg_fed": "the jpeg program with its batch size fed on every run (facenet's "
    "batch_size_placeholder); its tf.data twin is jpeg's (tf.data fixes the size)",
    "guide": "csv's input through a RandomShuffleQueue built in the threading guide's order "
    "(its QueueRunner made after the dequeue_many); its tf.data twin is csv's",
    "preloaded": "slice_input_producer over constants + batch(2 threads)",
    "join": "4 TFRecordReaders over one queue + shuffle_batch_join",
    "resnet": "resnet's CIFAR-10 input: fixed-length + pad, crop, flip, standardization + its "
    "own RandomShuffleQueue (16 enqueue threads, one QueueRunner) + dequeue_many",
    "resnet_seeded": "the same program with tf.set_random_seed(1)",
    "inception": "inception's input: 4 TFRecordReaders enqueue into its own RandomShuffleQueue "
    "(one QueueRunner), whose dequeue() 4 batch_join threads parse, crop, flip and scale",
    "im2txt": "im2txt's input: a TFRecordReader enqueues SequenceExamples into its own "
    "RandomShuffleQueue (one QueueRunner); 4 threads each dequeue(), decode the JPEG, resize, "
    "crop, flip, distort colours; batch_join pads the captions",
    "sequence": "cross_conv's input: TFRecordReader + parse_single_sequence_example of 4 frames "
    "reshaped to images + shuffle_batch(4 threads)",
    "step": "tiny model (batch 20, one matmul) trained from TextLineReader + batch: steps/s",
    "text_join": "4 TextLineReaders over one queue, each line split into token ids "
    "(string_split, string_to_number) padded to 24, into shuffle_batch_join",
    "resize": "FixedLengthRecordReader + decode_raw + resize_images to 48x48 + flip + "
    "standardization + shuffle_batch(4 threads)",
    "bucketing": "TextLineReader + string_split + tf.contrib.training.bucket_by_sequence_length "
    "(4 buckets, dynamic_pad); legacy = the tests' legacy-queue bucketing "
    "(TensorFlow 2 has no contrib), TF1 world only",
}
MODES = ["legacy", "compat", "tfdata"]


# -- data ----------------------------------------------------------------------------------


def make_data(root: str) -> None:
    import tensorflow as tf

    rng = np.random.default_rng(0)
    for shard in range(4):
        data.csv_shard(root, rng, shard)
        with tf.io.TFRecordWriter(os.path.join(root, f"img{shard}.tfrecord")) as writer:
            for i in range(2500):
                image = rng.integers(0, 255, size=32 * 32 * 3, dtype=np.uint8).tobytes()
                feature = {
                    "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image])),
                    "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i % 10])),
                }
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writer.write(example.SerializeToString())
        data.cifar_shard(root, rng, shard)
    os.makedirs(os.path.join(root, "jpeg"))
    for i in range(400):
        # Smooth images compress as photos do; noise would make every JPEG its worst case.
        base = rng.integers(0, 255, size=(12, 12, 3), dtype=np.uint8)
        image = tf.image.resize(base, [96, 96]).numpy().astype(np.uint8)
        with open(os.path.join(root, "jpeg", f"{i % 10}_{i}.jpg"), "wb") as f:
            f.write(tf.io.encode_jpeg(image, quality=90).numpy())
    for shard in range(4):
        # im2txt's records: a JPEG and a caption of 6-20 word ids, as SequenceExamples.
        with tf.io.TFRecordWriter(os.path.join(root, f"captions{shard}.tfrecord")) as writer:
            for i in range(100):
                base = rng.integers(0, 255, size=(12, 12, 3), dtype=np.uint8)
                image = tf.image.resize(base, [96, 96]).numpy().astype(np.uint8)
                jpeg = tf.io.encode_jpeg(image, quality=90).numpy()
                words = rng.integers(0, 10000, size=rng.integers(6, 21))
                sequence = tf.train.SequenceExample()
                sequence.context.feature["image/data"].bytes_list.value.append(jpeg)
                ids = sequence.feature_lists.feature_list["image/caption_ids"]
                for word in words:
                    ids.feature.add().int64_list.value.append(int(word))
                writer.write(sequence.SerializeToString())
    for shard in range(2):
        # cross_conv's records: SequenceExamples of 4 frames of 8x8x3 floats and a label.
        with tf.io.TFRecordWriter(os.path.join(root, f"frames{shard}.tfrecord")) as writer:
            for i in range(2000):
                sequence = tf.train.SequenceExample()
                sequence.context.feature["label"].int64_list.value.append(i % 10)
                frames = sequence.feature_lists.feature_list["frames"]
                for frame in rng.random((4, 8 * 8 * 3), dtype=np.float32):
                    frames.feature.add().float_list.value.extend(frame.tolist())
                writer.write(sequence.SerializeToString())
    for shard in range(4):
        # Sentences of 1-40 token ids, for bucketing by length.
        with open(os.path.join(root, f"tokens{shard}.txt"), "w") as f:
            for _ in range(5000):
                words = rng.integers(1, 10000, size=rng.integers(1, 41))
                f.write(" ".join(map(str, words)) + "\n")
    np.savez(
        os.path.join(root, "preloaded.npz"),
        images=rng.random((20000, 64), dtype=np.float32),
        labels=np.arange(20000, dtype=np.int32) % 10,
    )


# -- one measurement: a program in its own process -----------------------------------------


# Workloads that run another's program with its graph seeded (BENCH_SEED=1).
SEEDED = {"cifar_seeded": "cifar", "resnet_seeded": "resnet"}


# contrib.training's queue batchers are not in TensorFlow 2: their legacy runs use the
# legacy-queue version the tests hold them to.
LEGACY_CONTRIB = os.path.join(HERE, "..", "tests", "programs", "legacy_contrib_run.py")


# Workloads whose hand-written tf.data program is another's: tf.data fixes a batch size, so
# the fed-size program's twin is the constant-size one.
TFDATA_TWINS = {"jpeg_fed": "jpeg", "guide": "csv"}


def command(workload: str, mode: str, world: str) -> list:
    program = SEEDED.get(workload, workload)
    if mode == "tfdata":
        program = TFDATA_TWINS.get(program, program)
    program = os.path.join(PROGRAMS, f"{program}_{'tfdata' if mode == 'tfdata' else 'queues'}.py")
    if workload == "bucketing" and mode == "legacy":
        return [sys.executable, LEGACY_CONTRIB, program]
    return data.runner(mode, world) + [program]


def measure(workload: str, mode: str, world: str, root: str, steps: int) -> dict:
    cmd = command(workload, mode, world) + [root, str(steps)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", BENCH_SEED=str(int(workload in SEEDED)))
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=PROGRAMS)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({process.returncode}):\n{stderr[-3000:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_mb"] = usage.ru_maxrss / 1024
    # `compat-input run`'s own report: how each per-example graph ran.
    result["mapped"] = re.findall(r"compat-input: (\S+ ran .*)", stderr)
    return result


def measure_validation(mode: str, world: str) -> dict:
    """A full validation pass: compat_input.iterate in the running session vs legacy's
    workaround (new session, restore, start queues). Run in-process in the chosen world."""
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf

    tf1 = tf.compat.v1
    if world == "tf1":
        tf1.disable_v2_behavior()
    else:
        tf1.disable_eager_execution()
    import compat_input

    if mode == "tfdata":
        return {"examples_per_s": float("nan"), "peak_mb": float("nan"), "build_s": 0.0}
    train = compat_input if mode == "compat" else tf1.train
    data = np.random.default_rng(2).random((5000, 32), dtype=np.float32)
    ckpt_dir = tempfile.mkdtemp()
    times = []
    with tf.Graph().as_default():
        w = tf1.Variable(tf.ones([32, 1]))
        (row,) = train.slice_input_producer([tf.constant(data)], num_epochs=1, shuffle=False)
        batch = train.batch([row], 128, allow_smaller_final_batch=True)
        loss = tf.reduce_sum(tf.matmul(batch, w))
        saver = tf1.train.Saver([w])
        init = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        with tf1.Session() as sess:
            sess.run(init)
            saver.save(sess, os.path.join(ckpt_dir, "m"))
            if mode == "compat":
                compat_input.start_queue_runners(sess)
                for _ in range(5):
                    start = time.perf_counter()
                    sum(float(v) for v in compat_input.iterate(sess, loss))
                    times.append(time.perf_counter() - start)
        if mode == "legacy":
            for _ in range(5):
                start = time.perf_counter()
                with tf1.Session() as sess:
                    sess.run(tf1.local_variables_initializer())
                    saver.restore(sess, tf1.train.latest_checkpoint(ckpt_dir))
                    coord = tf1.train.Coordinator()
                    threads = tf1.train.start_queue_runners(sess, coord)
                    try:
                        while True:
                            sess.run(loss)
                    except tf.errors.OutOfRangeError:
                        pass
                    coord.request_stop()
                    coord.join(threads)
                times.append(time.perf_counter() - start)
    import resource

    return {
        "examples_per_s": len(data) / statistics.median(times),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "build_s": 0.0,
        "mapped": [],
    }


def _validation(mode: str, world: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--validation", mode, world],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- driver --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--only", default=",".join([*WORKLOADS, "validation"]))
    parser.add_argument("--worlds", default="tf1,tf2")
    parser.add_argument("--validation", nargs=2, metavar=("MODE", "WORLD"))
    args = parser.parse_args()
    if args.validation:
        print(json.dumps(measure_validation(*args.validation)))
        return 0

    os.makedirs(RESULTS, exist_ok=True)
    data.bytecode_as_installed()
    root = tempfile.mkdtemp(prefix="compat_input_bench_")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    make_data(root)
    workloads = args.only.split(",")
    worlds = args.worlds.split(",")
    samples = {(w, m, x): [] for w in workloads for m in MODES for x in worlds}
    for repeat in range(args.repeats):
        for w in workloads:
            for x in worlds:
                for m in MODES:  # Interleaved: drift hits every mode alike.
                    if w == "validation":
                        result = _validation(m, x)
                    else:
                        result = measure(w, m, x, root, args.steps)
                    samples[(w, m, x)].append(result)
                    rate = result["examples_per_s"]
                    print(f"[{repeat + 1}/{args.repeats}] {w:10s} {x} {m:7s} {rate:,.0f}/s")
    table = _table(samples, workloads, worlds, args)
    print(table)
    if set(workloads) != {*WORKLOADS, "validation"} or "tf1" not in worlds:
        return 0  # A partial run does not replace the full results.
    with open(os.path.join(RESULTS, "results.md"), "w") as f:
        f.write(table)
    with open(os.path.join(RESULTS, "results.json"), "w") as f:
        json.dump({"/".join(k): v for k, v in samples.items()}, f, indent=1)
    _chart(samples, workloads)
    return 0


def _median(samples: list, key: str) -> float:
    return statistics.median(s[key] for s in samples)


def _table(samples: dict, workloads: list, worlds: list, args) -> str:
    tf2 = "tf2" in worlds
    lines = [
        f"Medians of {args.repeats} runs (modes interleaved), {args.steps} timed steps after 10, "
        f"{os.cpu_count()} cores. Every program is an unmodified TF1 program file "
        "(benchmarks/programs/) run in its own process. **TF1 behaviour** (`compat-input run`, "
        "disable_v2_behavior(), where users run): legacy = `compat-input run --legacy`, "
        "compat = `compat-input run`, tf.data = the hand-written tf.data program. "
        + (
            "TF2 behaviour (eager off + install(), code converted by tf_upgrade_v2) is the "
            "last column. "
            if tf2
            else ""
        )
        + "Rates are examples/s, except `step` (training steps/s of a tiny model) and "
        "`validation` (one full pass over 5,000 examples: compat_input.iterate in the running "
        "session vs legacy's new session + restore + start).",
        "",
        "| workload | legacy | compat | tf.data | compat / legacy | compat / tf.data "
        "| peak MB (legacy, compat, tf.data) | how compat mapped it |"
        + (" TF2: compat / legacy, compat / tf.data |" if tf2 else ""),
        "|---|---|---|---|---|---|---|---|" + ("---|" if tf2 else ""),
    ]
    for w in workloads:
        key = "steps_per_s" if w == "step" else "examples_per_s"
        rate = {m: _median(samples[(w, m, "tf1")], key) for m in MODES}
        peak = {m: _median(samples[(w, m, "tf1")], "peak_mb") for m in MODES}
        mapped = "; ".join(samples[(w, "compat", "tf1")][-1].get("mapped", [])) or "-"
        row = (
            f"| {w} | {rate['legacy']:,.0f} | {rate['compat']:,.0f} | {rate['tfdata']:,.0f} | "
            f"**{rate['compat'] / rate['legacy']:.2f}x** | {rate['compat'] / rate['tfdata']:.2f}x "
            f"| {peak['legacy']:.0f}, {peak['compat']:.0f}, {peak['tfdata']:.0f} | {mapped} |"
        )
        if tf2:
            r2 = {m: _median(samples[(w, m, "tf2")], key) for m in MODES}
            row += f" {r2['compat'] / r2['legacy']:.2f}x, {r2['compat'] / r2['tfdata']:.2f}x |"
        lines.append(row)
    lines += ["", "Workloads:", ""]
    lines += [f"- `{w}`: {WORKLOADS.get(w, 'see above')}" for w in workloads]
    return "\n".join(lines) + "\n"


def _chart(samples: dict, workloads: list) -> None:
    """benchmarks/results/results.png: the three ways side by side, TF1 behaviour."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (make bench installs it)")
        return
    shown = [w for w in workloads if w not in ("validation", "step")]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.27
    for i, mode in enumerate(MODES):
        values = [_median(samples[(w, mode, "tf1")], "examples_per_s") for w in shown]
        bars = ax.bar([x + (i - 1) * width for x in range(len(shown))], values, width, label=mode)
        ax.bar_label(bars, labels=[f"{v / 1000:.0f}k" for v in values], fontsize=7)
    ax.set_xticks(range(len(shown)), shown)
    ax.set_ylabel("examples / s (median)")
    ax.set_yscale("log")
    ax.set_title("TF1 programs: legacy queues vs compat-input run vs hand-written tf.data")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "results.png"), dpi=120)


if __name__ == "__main__":
    sys.exit(main())
