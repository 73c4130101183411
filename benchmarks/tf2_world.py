"""`compat-input run`, but in the second world: TF2 behaviour with only eager execution
off, and compat_input.install() (what code converted by tf_upgrade_v2 runs in). For the
benchmark's TF2 column only.

    python benchmarks/tf2_world.py [--legacy] PROGRAM ARGS...
"""

import sys

import tensorflow as tf

from compat_input._src.commands import cli

# `compat-input run` switches on all of TF1 behaviour; here only graph mode.
tf.compat.v1.disable_v2_behavior = tf.compat.v1.disable_eager_execution
sys.exit(cli.main(["run", *sys.argv[1:]]))
