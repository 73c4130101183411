"""Input files, checked when a reader is built, where legacy failed later in a runner thread.

A missing file, a directory, or a file that cannot be read is named at build time with the
fix, instead of failing (or, under legacy, ending the input) somewhere inside a run.
Under `bad_records="skip"` such a file is skipped instead, named once (`unusable`,
`skipping_unusable`).
"""

import logging
import sys

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tracing
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1


def first_bytes(reader: str, queue, leave_out=()) -> dict:
    """`{path: its first two bytes}` (a format's magic) of every file `queue` names but
    those left out, read to prove each can be read; raises naming the reader, the
    producer, the file and the fix."""
    items = [f for f in queue.items if f not in leave_out]
    missing = [f for f in items if not tf.io.gfile.exists(f)]
    if missing:
        raise tf.errors.NotFoundError(
            None,
            None,
            f"{reader}: {len(missing)} of the {len(items)} files given to "
            f"'{queue.name}' do not exist: {', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}. Fix the paths or the glob.",
        )
    return {path: _first_bytes(reader, path, queue.name) for path in items}


def _first_bytes(reader: str, path: str, queue_name: str) -> bytes:
    if tf.io.gfile.isdir(path):
        raise tf.errors.FailedPreconditionError(
            None,
            None,
            f"{reader}: {path}, given to '{queue_name}', is a directory, not "
            "a file. Give the files in it (tf.io.gfile.glob(path + '/*')).",
        )
    try:
        with tf.io.gfile.GFile(path, "rb") as f:
            return f.read(2)
    except (tf.errors.PermissionDeniedError, PermissionError) as e:
        raise tf.errors.PermissionDeniedError(
            None,
            None,
            f"{reader}: {path}, given to '{queue_name}', cannot be read: {e}. "
            "Fix its permissions, or run as a user who may read it.",
        ) from None


def unusable(reader: str, queue) -> list:
    """The files `queue` names that cannot be read, each logged once with the reason: they
    are left out under `bad_records="skip"`."""
    bad = []
    for path in dict.fromkeys(queue.items):
        try:
            if not tf.io.gfile.exists(path):
                raise tf.errors.NotFoundError(None, None, f"{path} does not exist")
            _first_bytes(reader, path, queue.name)
        except tf.errors.OpError as error:
            logging.getLogger("compat_input").warning(
                "%s skips %s (bad_records='skip'): %s", reader, path, error.message
            )
            bad.append(path)
    return bad


def gone_log() -> tf.Variable:
    """A reader's record of the files found gone while reading, by name."""
    return pipeline_lib.state_variable(initial("", tf.string, [0]), "skipped", [None])


def skipping_unusable(
    records: tf.data.Dataset, path: tf.Tensor, reader: str, unusable: list, skipped
) -> tf.data.Dataset:
    """`records` of the file `path`, or none where the file is in `unusable` (found at
    build time, logged then) or gone now (named once, when first skipped, in the string
    vector variable `skipped`, and logged then).

    A file that cannot be opened would fail again at every retry: an endless loop of
    errors under ignore_errors. It is left out, unopened, instead.
    """
    # A glob of the path with its glob characters escaped matches the file alone.
    pattern = tf.strings.regex_replace(path, r"([*?\[\]\\])", r"\\\1")
    exists = tf.size(tf.io.matching_files(pattern)) > 0
    known = tf.constant(False)
    if unusable:
        known = tf.reduce_any(tf.equal(path, tf.constant(unusable)))
    gone = tf.logical_and(tf.logical_not(exists), tf.logical_not(known))

    def skip():
        named = graph_ops.ReadVariableOp(resource=skipped.handle, dtype=tf.string)

        def name_it():
            message = tf.strings.join([reader, " skips ", path, ": it is gone"])
            logged = tf.print(message, output_stream=sys.stderr)
            more = tf.concat([named, tf.reshape(path, [1])], 0)
            kept = graph_ops.AssignVariableOp(resource=skipped.handle, value=more)
            return tracing.after(tf.group(logged, kept))

        # Named once, not once per epoch.
        return tf.cond(tf.reduce_any(tf.equal(named, path)), lambda: True, name_it)

    with tf.control_dependencies([tf.cond(gone, skip, lambda: True)]):
        usable = tf.logical_and(exists, tf.logical_not(known))
    return records.take(tf.where(usable, tf.constant(-1, tf.int64), 0))


def match_filenames_once(pattern, name=None):
    """Drop-in replacement for `tf.compat.v1.train.match_filenames_once`.

    Unchanged: a local variable holding the sorted matches. Producers accept it as a ref or
    a resource variable.
    """
    with tf1.name_scope(name, "matching_filenames", [pattern]) as scope:
        return tf1.Variable(
            name=scope.rstrip("/"),
            initial_value=tf.io.matching_files(pattern),
            trainable=False,
            validate_shape=False,
            collections=[tf1.GraphKeys.LOCAL_VARIABLES],
        )
