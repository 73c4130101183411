"""Input files, checked when a reader is built, where legacy failed later in a runner thread.

A missing file, a directory, or a file that cannot be read is named at build time with the
fix, instead of failing (or, under legacy, ending the input) somewhere inside a run.
"""

import tensorflow as tf


def first_bytes(reader: str, queue) -> dict:
    """`{path: its first two bytes}` (a format's magic) of every file `queue` names, read to
    prove each can be read; raises naming the reader, the producer, the file and the fix."""
    items = queue.items
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
