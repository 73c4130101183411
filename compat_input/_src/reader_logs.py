"""What each reader logs as it reads, so that an error can name its file and record.

The hot path logs a block at a time (origins.py explains how errors use the logs):

- `RecentRecords`: the keys (text: and lines) of a reader's last blocks of records, one op
  per block of 256, each record with its position in the reader's stream.
- `OpenedFiles`: the last files a reader opened, for errors raised while reading (a
  truncated GZIP stream is named by reading the recent files again until one fails the
  same way).
"""

from typing import Optional

import tensorflow as tf

from compat_input._src import pipeline as pipeline_lib
from compat_input._src.state_variables import initial

tf1 = tf.compat.v1

# Files and blocks of records kept: more than a pipeline reads ahead of the program.
_FILES = 16
_BLOCKS = 16


class OpenedFiles:
    """The last work items a reader opened, to find the file a reading error came from.

    Reading goes on ahead of the program after an error, so the file being read when
    the error reaches Python may be a later one: the recent files are read again, most
    recent first, until one fails the same way.
    """

    def __init__(self, replay):
        self._replay = replay  # path -> the OpError reading it raises, or None
        with tf1.name_scope("opened_files"):
            self._names = pipeline_lib.state_variable(initial("", tf.string, [_FILES]), "names")
            self._order = pipeline_lib.state_variable(initial(-1, tf.int64, [_FILES]), "order")
            self.snapshot = (self._order, self._names)  # Fetched as values.

    def handles(self) -> list:
        """What `opened` writes: passed to a function traced once for every reader."""
        return [self._names.handle, self._order.handle]

    def opened(self, index: tf.Tensor, work: tf.Tensor, handles=None) -> tf.Operation:
        names, order = handles or self.handles()
        slot = index % _FILES
        return tf.group(
            tf.raw_ops.ResourceScatterUpdate(resource=names, indices=slot, updates=work),
            tf.raw_ops.ResourceScatterUpdate(resource=order, indices=slot, updates=index),
        )

    def culprit(self, values, error: tf.errors.OpError) -> Optional[str]:
        order, names = values
        recent = sorted(
            ((int(i), n.decode("utf-8", "replace")) for i, n in zip(order, names) if i >= 0),
            reverse=True,
        )
        for _, path in recent:
            again = self._replay(path)
            if type(again) is type(error) and same_failure(again.message, error.message):
                return path
        return None


def same_failure(replayed: str, original: str) -> bool:
    """Whether the replayed error's own words appear in the original message."""
    for line in replayed.splitlines():
        line = line.strip()
        if len(line) > 10 and not line.startswith("[[") and not line.endswith(":"):
            if line in original:
                return True
    return False


class RecentRecords:
    """The keys of the last records a reader produced, logged a block at a time.

    Each logged record has a position: its number among the records the reader logged,
    counted from 0 and never reset, so that a batcher's count of examples taken points at
    the record after them (origins.Suspect).
    """

    def __init__(self, block: int, with_values: bool = False):
        self._block = block
        with tf1.name_scope("recent_records"):
            # One row more than are read: where an empty block is written, unread. A row's
            # last column is the position of its first record (a file's last block is
            # short): in the keys' own variable, as each op costs every session memory.
            self._keys = pipeline_lib.state_variable(
                initial("", tf.string, [_BLOCKS + 1, block + 1]), "keys"
            )
            # Blocks and records logged.
            self._count = pipeline_lib.state_variable(initial(0, tf.int64, [2]), "blocks")
            self.snapshot = (self._count, self._keys)  # Fetched as values.
            # Small records (text lines) are kept too: naming a bad one then reads no file.
            self._values = None
            if with_values:
                self._values = pipeline_lib.state_variable(
                    initial("", tf.string, [_BLOCKS + 1, block]), "values"
                )
                self.snapshot += (self._values,)

    def handles(self) -> list:
        """What `log` writes: passed to a function traced once for every reader."""
        logs = [self._count.handle, self._keys.handle]
        return logs + ([self._values.handle] if self._values is not None else [])

    def log(self, keys: tf.Tensor, values=None, handles=None) -> tf.Operation:
        """Logs up to `block` keys; a longer vector (a whole file at once) logs its last ones."""
        count, logged_keys, *logged_values = handles or self.handles()
        if logged_values and values is not None:
            # Values go first, into the row their keys go to next.
            counted = tf.raw_ops.ReadVariableOp(resource=count, dtype=tf.int64)
            with tf.control_dependencies([self._write(logged_values[0], counted[0], values)]):
                keys = tf.identity(keys)
        total = tf.size(keys, out_type=tf.int64)
        some = tf.cast(total > 0, tf.int64)
        with tf.control_dependencies(
            [tf.raw_ops.AssignAddVariableOp(resource=count, value=tf.stack([some, total]))]
        ):
            # Two blocks logged at once may share a row; then one of them is not named.
            counted = tf.raw_ops.ReadVariableOp(resource=count, dtype=tf.int64)
        first = counted[1] - tf.minimum(total, self._block)
        return self._write(logged_keys, counted[0] - 1, keys, tf.strings.as_string(first))

    def _write(self, variable, number: tf.Tensor, keys: tf.Tensor, first=None) -> tf.Operation:
        # An empty block (the end of a file) goes to the unread row: without a cond, which
        # costs every pipeline a function more.
        row = tf.where(tf.size(keys) > 0, number % _BLOCKS, _BLOCKS)
        keys = keys[-self._block :]
        padded = tf.pad(keys, [[0, self._block - tf.size(keys)]], constant_values="")
        width = self._block
        if first is not None:
            padded, width = tf.concat([padded, tf.reshape(first, [1])], 0), width + 1
        return tf.raw_ops.ResourceScatterUpdate(
            resource=variable,
            indices=tf.reshape(row, [1]),
            updates=tf.reshape(padded, [1, width]),
        )

    def records(self, values) -> tuple:
        """`(keys(values), {key: value})`, or `(keys, None)` where values are not logged."""
        logged = self.keys(values[:2])
        if self._values is None:
            return logged, None
        count, rows = int(values[0][0]), values[2]
        found = {
            key.decode("utf-8", "replace"): value
            for number in range(max(0, count - _BLOCKS), count)
            for key, value in zip(values[1][number % _BLOCKS], rows[number % _BLOCKS])
            if key
        }
        return logged, found

    def keys(self, values) -> list:
        """`(position, key)` of the logged records, oldest first; positions never repeat."""
        count, rows = values
        count = int(count[0])
        return [
            (int(row[-1] or 0) + i, key.decode("utf-8", "replace"))
            for row in (rows[number % _BLOCKS] for number in range(max(0, count - _BLOCKS), count))
            for i, key in enumerate(row[:-1])
            if key
        ]
