"""Benchmarks of whole programs: model included, as their users time them.

Each program in benchmarks/whole_programs/ is an unmodified TF1 trainer of a kind public
programs are (the CIFAR-10 tutorial's, the PTB language model's, an ImageNet-style JPEG
trainer, a tiny model's, youtube-8m's `read_up_to` + `parse_example` into
`shuffle_batch_join` under a Supervisor, tf_slim's DatasetDataProvider + `batch` +
`prefetch_queue` as research/slim's image classifier builds them), run three ways, each in its own process, in TF1 behaviour:

- legacy:  `compat-input run --legacy PROGRAM`: TensorFlow's own queues;
- compat:  `compat-input run PROGRAM`: compat_input, as a user runs it;
- tf.data: `compat-input run --legacy PROGRAM_tfdata`: the same program with its input
  written by hand in tf.data (the model and the loop are the same modules).

Seeded (`tf.set_random_seed(1)`, as most programs do) and unseeded. What is reported: time
to the first step (graph build + session start + the first step), steady steps/s, and the
process's whole wall time (Python and TensorFlow's import included). Modes interleaved,
medians of `--repeats`. Results: benchmarks/results/whole.md (and whole.json).

    python benchmarks/whole.py [--repeats 3] [--only cifar10,ptb-small]   (partial: whole-NAMES.md)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import data
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "whole_programs")
RESULTS = os.path.join(HERE, "results")
# name: (program, its extra arguments, timed steps)
WORKLOADS = {
    "cifar10": ("cifar10_train.py", [], 20),
    "imagenet": ("imagenet_train.py", [], 30),
    "ptb-small": ("ptb_word_lm.py", ["small"], 60),
    "ptb-test": ("ptb_word_lm.py", ["test"], 1000),
    "tiny": ("tiny_trainer.py", [], 1000),
    "resnet": ("resnet_train.py", [], 100),
    "video": ("video_train.py", [], 30),
    "sentences": ("sentences_train.py", [], 30),
    "slim": ("slim_train.py", [], 30),
}
MODES = ["legacy", "compat", "tfdata"]


def make_data(root: str) -> None:
    import tensorflow as tf

    rng = np.random.default_rng(0)
    for shard in range(4):
        data.csv_shard(root, rng, shard)
        data.cifar_shard(root, rng, shard)
        data.video_shard(root, rng, shard)
        data.sentences_shard(root, rng, shard)
    # Word ids with a Zipf-like spread, as text has.
    np.save(os.path.join(root, "ptb_ids.npy"), (rng.zipf(1.3, 300_000) % 10000).astype(np.int32))
    for shard in range(4):
        path = os.path.join(root, f"imagenet-{shard}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(100):
                # Smooth images compress as photos do; noise would make every JPEG its worst.
                base = rng.integers(0, 255, size=(16, 20, 3), dtype=np.uint8)
                image = tf.image.resize(base, [160, 200]).numpy().astype(np.uint8)
                box = sorted(rng.random(2) * 0.5) + sorted(0.5 + rng.random(2) * 0.5)

                def floats(v):
                    return tf.train.Feature(float_list=tf.train.FloatList(value=[v]))

                feature = {
                    "image/encoded": tf.train.Feature(
                        bytes_list=tf.train.BytesList(value=[tf.io.encode_jpeg(image).numpy()])
                    ),
                    "image/class/label": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=[i % 10])
                    ),
                    "image/object/bbox/ymin": floats(box[0]),
                    "image/object/bbox/xmin": floats(box[1]),
                    "image/object/bbox/ymax": floats(box[2]),
                    "image/object/bbox/xmax": floats(box[3]),
                }
                example = tf.train.Example(features=tf.train.Features(feature=feature))
                writer.write(example.SerializeToString())


def measure(workload: str, mode: str, seeded: bool, root: str) -> dict:
    program, extra, steps = WORKLOADS[workload]
    if mode == "tfdata":
        program = program.replace(".py", "_tfdata.py")
    cmd = data.runner(mode)
    cmd += [os.path.join(PROGRAMS, program), root, str(steps), *extra]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", BENCH_SEED="1" if seeded else "0")
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=PROGRAMS)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    result["to_first_step_s"] = result["build_s"] + result["start_s"] + result["first_step_s"]
    result["mapped"] = [
        line.split("compat-input: ", 1)[1]
        for line in out.stderr.splitlines()
        if line.startswith("compat-input: ") and " ran " in line
    ]
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(WORKLOADS))
    args = parser.parse_args()
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    data.bytecode_as_installed()
    root = tempfile.mkdtemp(prefix="compat_input_whole_")
    make_data(root)
    runs = [(w, s) for w in args.only.split(",") for s in (False, True)]
    samples: dict = {(w, s, m): [] for w, s in runs for m in MODES}
    for repeat in range(args.repeats):
        for w, seeded in runs:
            for m in MODES:  # Interleaved: drift hits every mode alike.
                result = measure(w, m, seeded, root)
                samples[(w, seeded, m)].append(result)
                print(
                    f"[{repeat + 1}/{args.repeats}] {w:10s} {'seeded' if seeded else 'unseeded':8s}"
                    f" {m:7s} wall {result['wall_s']:6.2f} s, first step "
                    f"{result['to_first_step_s']:5.2f} s, {result['steps_per_s']:8.1f} steps/s",
                    flush=True,
                )
    table = _table(samples, runs, args.repeats)
    print(table)
    # A partial run does not replace the full results: it writes whole-NAMES.md beside them.
    stem = "whole" if args.only == ",".join(WORKLOADS) else "whole-" + args.only.replace(",", "-")
    with open(os.path.join(RESULTS, f"{stem}.md"), "w") as f:
        f.write(table)
    if stem == "whole":
        with open(os.path.join(RESULTS, "whole.json"), "w") as f:
            json.dump({f"{w}/{'seeded' if s else 'unseeded'}/{m}": v
                       for (w, s, m), v in samples.items()}, f, indent=1)
    return 0


def _median(samples: list, key: str) -> float:
    return statistics.median(s[key] for s in samples)


def _table(samples: dict, runs: list, repeats: int) -> str:
    lines = [
        f"Whole programs, model included (benchmarks/whole_programs/), medians of {repeats} "
        f"runs, modes interleaved, {os.cpu_count()} cores, **TF1 behaviour** (`compat-input "
        "run`). legacy = `compat-input run --legacy`, compat = `compat-input run`, tf.data = "
        "the same program with its input written by hand in tf.data. Wall: the whole process; "
        "first step: graph build + session start + the first step; steps/s: steady, after "
        "5 more. Ratios are speed-ups (legacy's wall / compat's; steps/s over steps/s).",
        "",
        "| program | seed | wall legacy / compat / tf.data (s) | **wall: compat vs legacy** "
        "| compat vs tf.data | first step legacy / compat / tf.data (s) | steps/s legacy / "
        "compat / tf.data | steps/s: compat vs legacy | how compat mapped it |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for w, seeded in runs:
        s = {m: samples[(w, seeded, m)] for m in MODES}
        wall = {m: _median(s[m], "wall_s") for m in MODES}
        first = {m: _median(s[m], "to_first_step_s") for m in MODES}
        rate = {m: _median(s[m], "steps_per_s") for m in MODES}
        mapped = "; ".join(dict.fromkeys(s["compat"][-1]["mapped"])) or "-"
        lines.append(
            f"| {w} | {'seeded' if seeded else 'unseeded'} "
            f"| {wall['legacy']:.2f} / {wall['compat']:.2f} / {wall['tfdata']:.2f} "
            f"| **{wall['legacy'] / wall['compat']:.2f}x** | {wall['tfdata'] / wall['compat']:.2f}x "
            f"| {first['legacy']:.2f} / {first['compat']:.2f} / {first['tfdata']:.2f} "
            f"| {rate['legacy']:,.1f} / {rate['compat']:,.1f} / {rate['tfdata']:,.1f} "
            f"| {rate['compat'] / rate['legacy']:.2f}x | {mapped} |"
        )
    lines += [
        "",
        "Start-up, medians: build / session start / first step (s), and issue 51's budget for "
        "their sum (compat within the tf.data twin's + 0.1 s and legacy's + 0.2 s).",
        "",
        "| program | seed | legacy | compat | tf.data | compat - tf.data | compat - legacy "
        "| within budget |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for w, seeded in runs:
        parts = {
            m: [_median(samples[(w, seeded, m)], k) for k in ("build_s", "start_s", "first_step_s")]
            for m in MODES
        }
        total = {m: _median(samples[(w, seeded, m)], "to_first_step_s") for m in MODES}
        over_twin, over_legacy = total["compat"] - total["tfdata"], total["compat"] - total["legacy"]
        lines.append(
            f"| {w} | {'seeded' if seeded else 'unseeded'} | "
            + " | ".join(" / ".join(f"{v:.2f}" for v in parts[m]) for m in MODES)
            + f" | {over_twin:+.2f} | {over_legacy:+.2f} "
            f"| {'yes' if over_twin <= 0.1 and over_legacy <= 0.2 else 'no'} |"
        )
    lines += ["", "Programs:", ""]
    lines += [
        f"- `{w}`: {WORKLOADS[w][0]} {' '.join(WORKLOADS[w][1])}, {WORKLOADS[w][2]} timed steps"
        for w in dict.fromkeys(w for w, _ in runs)
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
