"""install(): serve the `tf.compat.v1` queue-input names from compat_input.

A program converted by `tf_upgrade_v2` spells the queue API `tf.compat.v1.train.batch`,
`tf.compat.v1.TextLineReader`, ...; installing replaces those attributes of TensorFlow's
`compat.v1` modules with compat_input's, so the program runs on tf.data untouched.
`uninstall()` puts TensorFlow's own back. The table below is the whole contract.
"""

import threading

import tensorflow as tf

import compat_input

# (module path under tf.compat.v1, attribute names): the one table of what compat_input
# serves; the codemod (tools/rules.py) renames the same names.
SERVED = (
    (
        "train",
        (
            "batch",
            "batch_join",
            "maybe_batch",
            "maybe_batch_join",
            "shuffle_batch",
            "shuffle_batch_join",
            "maybe_shuffle_batch",
            "maybe_shuffle_batch_join",
            "input_producer",
            "string_input_producer",
            "range_input_producer",
            "slice_input_producer",
            "limit_epochs",
            "match_filenames_once",
            "start_queue_runners",
            "add_queue_runner",
            "QueueRunner",
            "Supervisor",
        ),
    ),
    ("train.queue_runner", ("QueueRunner", "add_queue_runner", "start_queue_runners")),
    # tf_upgrade_v2 moves tf.train.match_filenames_once here.
    ("io", ("match_filenames_once",)),
    (
        "",
        (
            "TextLineReader",
            "TFRecordReader",
            "FixedLengthRecordReader",
            "WholeFileReader",
            "IdentityReader",
        ),
    ),
)

_saved: dict = {}
_lock = threading.Lock()


def _module(path: str):
    module = tf.compat.v1
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    return module


def install() -> None:
    """Serves the `tf.compat.v1` queue-input names from compat_input (idempotent)."""
    with _lock:
        for path, names in SERVED:
            module = _module(path)
            for name in names:
                key = (path, name)
                if key not in _saved:
                    _saved[key] = getattr(module, name)
                setattr(module, name, getattr(compat_input, name))


def uninstall() -> None:
    """Restores TensorFlow's own `tf.compat.v1` queue-input names."""
    with _lock:
        for (path, name), original in _saved.items():
            setattr(_module(path), name, original)
        _saved.clear()


def installed() -> bool:
    return bool(_saved)
