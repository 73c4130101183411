"""Inputs compat_input cannot serve run on TensorFlow's own queues, as legacy ran them.

This is the one place where compat_input's runtime calls TensorFlow's queue input
functions (its own `tf.compat.v1.train.batch` and friends). A batcher whose plan cannot be made into a
tf.data pipeline (a `CaptureError`: lists that share some sources but not all, a batch
size tf.data cannot take, ...) is built instead by the legacy function of its name, with
the same arguments, in the name scope the batcher had opened (its outputs keep legacy's
names) and with the graph's op-seed counter as it was before the attempt (every random
op made afterwards draws legacy's seed). TensorFlow's own classes are in place while it
builds (core/patching.originals), so its queue and QueueRunner are TensorFlow's: started,
stopped, checkpointed and exported exactly as legacy's. Where the legacy function raises
too, its error is the one legacy code would have seen, and it is raised.

Each input kept on TensorFlow's queues is logged and listed in `kept`, which
`compat-input run` reports at exit with the reason and the fix: a slow path is never
silent. Programs' own queues that stay TensorFlow's (batchers/queues.py) are listed there
too.
"""

import logging
from collections.abc import Callable
from typing import Any

import tensorflow as tf

from compat_input._src.core import devices
from compat_input._src.core import errors
from compat_input._src.core import patching
from compat_input._src.core import tf_internals

logger = logging.getLogger("compat_input")

# "what 'name' (file:line): why", for `compat-input run`'s report, in the order kept.
kept: list = []


def keep(line: str, warn: bool = True) -> None:
    """Names one input that stays on TensorFlow's queues, and why. Without `warn`, logged
    at info: a queue whose QueueRunner may still come (batchers/early_reads.py)."""
    kept.append(line)
    log = logger.warning if warn else logger.info
    log("compat_input: left on TensorFlow's queue: %s", line)


def withdraw(line: str) -> None:
    """Takes back a line `keep` listed: the input is served after all."""
    if line in kept:
        kept.remove(line)


def served_or_legacy(what: str, scope: str, serve: Callable[[], Any], legacy_call: Callable):
    """`serve()`, or where it cannot serve the input, `legacy_call(f)` with `f` TensorFlow's
    own input function `what`, built in TensorFlow's classes, the op-seed counter as it was
    before `serve()` started. Raises the legacy function's error where it fails too."""
    graph = tf.compat.v1.get_default_graph()
    seeds = tf_internals.seed_counter(graph)
    try:
        with devices.on_host(graph):
            return serve()
    except errors.ServiceError:
        raise  # The service asked for is what fails: legacy queues would not share the input.
    except Exception as error:  # noqa: BLE001 - legacy's own call decides: see the docstring.
        reason = error
    tf_internals.set_seed_counter(graph, seeds)
    with patching.originals(), tf_internals.our_deprecated_calls():
        built = legacy_call(getattr(tf_internals.legacy_module("training.input"), what))
    where = errors.calling_line()
    first_line = str(reason).split("\n")[0]
    keep(
        f"{what} '{scope.rstrip('/')}'{f' ({where})' if where else ''}: {first_line} "
        "(it runs on TensorFlow's queue runner threads, as legacy ran it)"
    )
    return built
