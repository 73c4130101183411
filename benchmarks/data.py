"""Data files the benchmark drivers (run.py, whole.py) make for their programs."""

import os

import numpy as np


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
