"""What the benchmark drivers share: the data files run.py and whole.py make for their
programs, our modules compiled as an install compiles them (towers.py too), the
command that runs a program each way, and running one for the line it reports."""

import compileall
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bytecode_as_installed() -> None:
    """Compiles compat_input's modules as `pip install` of a wheel does. Our checkout is
    installed editable, and where PYTHONDONTWRITEBYTECODE is set (this machine sets it)
    Python compiled every module of ours again in every run, inside the programs' build
    time (about 80 ms of the tiny trainer's), while TensorFlow's came compiled."""
    compileall.compile_dir(os.path.join(ROOT, "compat_input"), quiet=1)


def runner(mode: str, world: str = "tf1") -> list:
    """The command (less the program) that runs a program as `compat-input run` (`mode`
    "compat") or `compat-input run --legacy` (any other mode: legacy queues, a tf.data
    twin), in TF1 behaviour or, `world` "tf2", TF2 behaviour with install() (tf2_world.py)."""
    if world == "tf1":
        command = [sys.executable, "-m", "compat_input._src.commands.cli", "run"]
    else:
        command = [sys.executable, os.path.join(ROOT, "benchmarks", "tf2_world.py")]
    return command + ([] if mode == "compat" else ["--legacy"])


def last_line(command: list, what: str, tag: str = "", env=None, timeout: int = 600) -> str:
    """The last line of `command`'s output that starts with `tag`, the program run in a
    process of its own with TensorFlow's logs quiet (`env` adds to the environment);
    RuntimeError naming `what`, with the end of its stderr, if it fails."""
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{done.stderr[-2000:]}")
    return [line for line in done.stdout.strip().splitlines() if line.startswith(tag)][-1]


def csv_shard(root: str, rng: np.random.Generator, shard: int) -> None:
    """part{shard}.csv: 25,000 rows of 10 integers."""
    rows = rng.integers(0, 1000, size=(25000, 10))
    np.savetxt(os.path.join(root, f"part{shard}.csv"), rows, fmt="%d", delimiter=",")


def cifar_shard(root: str, rng: np.random.Generator, shard: int) -> None:
    """cifar{shard}.bin: 2,500 CIFAR-10 records (a label byte 0-9, then 32x32x3 pixels)."""
    records = rng.integers(0, 255, size=(2500, 3073), dtype=np.uint8)
    records[:, 0] = rng.integers(0, 10, size=2500)
    with open(os.path.join(root, f"cifar{shard}.bin"), "wb") as f:
        f.write(records.tobytes())


def video_shard(root: str, rng: np.random.Generator, shard: int) -> None:
    """video-{shard}.tfrecord: 1,000 examples as youtube-8m's aggregated video features are
    (an id, 1-3 labels of 100, 1024 mean RGB and 128 mean audio floats)."""
    import tensorflow as tf

    def feature(kind, values):
        lists = {"bytes": tf.train.BytesList, "int64": tf.train.Int64List,
                 "float": tf.train.FloatList}
        return tf.train.Feature(**{f"{kind}_list": lists[kind](value=values)})

    with tf.io.TFRecordWriter(os.path.join(root, f"video-{shard}.tfrecord")) as writer:
        for i in range(1000):
            labels = rng.choice(100, size=rng.integers(1, 4), replace=False)
            example = tf.train.Example(features=tf.train.Features(feature={
                "id": feature("bytes", [f"{shard}-{i}".encode()]),
                "labels": feature("int64", labels.tolist()),
                "mean_rgb": feature("float", rng.standard_normal(1024).tolist()),
                "mean_audio": feature("float", rng.standard_normal(128).tolist()),
            }))
            writer.write(example.SerializeToString())


def sentences_shard(root: str, rng: np.random.Generator, shard: int) -> None:
    """sentences-{shard}.tfrecord: 2,500 examples as skip_thoughts' are (three sentences of
    5-29 word ids of 200: the one encoded, the one before and the one after)."""
    import tensorflow as tf

    def ids():
        values = rng.integers(1, 200, size=rng.integers(5, 30)).tolist()
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    with tf.io.TFRecordWriter(os.path.join(root, f"sentences-{shard}.tfrecord")) as writer:
        for _ in range(2500):
            example = tf.train.Example(features=tf.train.Features(feature={
                "encode": ids(), "decode_pre": ids(), "decode_post": ids()}))
            writer.write(example.SerializeToString())
