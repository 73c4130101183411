"""`compat-input run --legacy PROGRAM ARGS`, with tf.contrib.training's bucketing stood
in by the legacy-queue version of legacy_contrib_training.py, as the tests' oracle."""

import os
import sys

from compat_input._src.commands import cli
from compat_input._src.commands import contrib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
contrib.HOMES["training.bucket_by_sequence_length"] = (
    "legacy_contrib_training:bucket_by_sequence_length"
)
sys.exit(cli.main(["run", "--legacy", *sys.argv[1:]]))
