"""Rereading: a reader's records read again from their files, in a graph of their own.

After an error, origins.py names the record it came from by reading the recent records
again (`reread`) or the recently opened files until one fails the same way (`replay`).
Nothing of the program's graph is touched: no counters, no logs.
"""

from collections.abc import Callable
from typing import Optional

import tensorflow as tf

from compat_input._src.runtime import iterators

_BLOCK = 256


def _read_alone(records: Callable, path: str, take) -> Optional[tf.errors.OpError]:
    """Reads `path` through `records(work, bump)`, passing `take` each block of `(keys,
    values)`; returns the error reading it raised, or None when it read to the end."""
    with tf.Graph().as_default():
        dataset = records(tf.constant(path), lambda keys, *args, **kwargs: tf.no_op())
        blocks = iterators.one_shot(dataset.batch(_BLOCK)).get_next()
        with tf.compat.v1.Session() as sess:
            done = 0
            try:
                while True:
                    keys, values = sess.run(blocks)
                    take(keys, values)
                    done += len(keys)
            except tf.errors.OutOfRangeError:
                return None
            except tf.errors.OpError as error:
                failed = error
            # A batch that fails loses what it gathered: the records of the block the
            # error cut short, one at a time (read only after an error).
            after = dataset.skip(done)
            record = iterators.one_shot(after).get_next()
            try:
                while True:
                    key, value = sess.run(record)
                    take([key], [value])
            except tf.errors.OpError:
                return failed


def replay(records: Callable, path: str) -> Optional[tf.errors.OpError]:
    """The error reading `path` raises now, or None."""
    return _read_alone(records, path, lambda keys, values: None)


def reread(records: Callable, keys: list, keys_name_files: bool) -> dict:
    """The values of the records with these legacy keys, read again from their files.

    `keys_name_files`: keys are `file:number` (readers of files), not work items. Records
    a file no longer yields (it changed, or cannot be read) are left out.
    """
    wanted = set(keys)
    found: dict = {}

    def take(block_keys, values):
        for key, value in zip(block_keys, values):
            key = key.decode("utf-8", "replace")
            if key in wanted:
                found[key] = value

    paths = (k.rpartition(":")[0] if keys_name_files else k for k in keys)
    for path in dict.fromkeys(paths):
        _read_alone(records, path, take)
    return found
