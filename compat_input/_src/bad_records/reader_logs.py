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

from compat_input._src.core import graph_ops
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1

# Which of RecentRecords' counts: records logged (produced), work items finished.
RECORDS, FINISHED = 1, 2

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
            graph_ops.ResourceScatterUpdate(resource=names, indices=slot, updates=work),
            graph_ops.ResourceScatterUpdate(resource=order, indices=slot, updates=index),
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
        self._with_values = with_values
        # A block's row: its keys joined, then (small records, text lines) its values
        # joined, so that naming a bad one reads no file; then the position of its first
        # record (a file's last block is short) and how many it logged. Joined, a block
        # costs its bytes, not a padded cell per record, and one write: each op of the
        # function that logs is instantiated by every pipeline's iterator and costs a
        # session kilobytes (50 towers: 24 MB for the padded rows, written apart).
        self._width = 4 if with_values else 3
        with tf1.name_scope("recent_records"):
            # One row more than are read: where an empty block is written, unread.
            self._rows = pipeline_lib.state_variable(
                initial("", tf.string, [_BLOCKS + 1, self._width]), "keys"
            )
            # Blocks and records logged, and work items finished. Every record a reader
            # produces is logged, so these are its counts too (records produced, work units
            # completed): one variable, one write per block, where three were written apart.
            self._count = pipeline_lib.state_variable(initial(0, tf.int64, [3]), "counts")
            self.snapshot = (self._count, self._rows)  # Fetched as values.

    def handles(self) -> list:
        """What `log` writes: passed to a function traced once for every reader."""
        return [self._count.handle, self._rows.handle]

    def count(self, which: int, or_zero: bool = False) -> tf.Tensor:
        """One of the counts (`RECORDS`, `FINISHED`), read now; `or_zero`: 0 where nothing
        initialized the log yet (no pipeline of the reader was started)."""
        handle = self._count.handle

        def read():
            return graph_ops.ReadVariableOp(resource=handle, dtype=tf.int64)[which]

        if not or_zero:
            return read()
        initialized = graph_ops.VarIsInitializedOp(resource=handle)
        return tf.cond(initialized, read, lambda: tf.constant(0, tf.int64))

    def finished(self, handles=None, empty_after=None, work=None) -> tf.Operation:
        """Counts one more work item finished (`empty_after`: see `log`)."""
        count, _ = handles or self.handles()
        one = tf.constant([0, 0, 1], tf.int64)
        counted = graph_ops.AssignAddVariableOp(resource=count, value=one)
        return _never_empty(counted, count, empty_after, work)

    def log(
        self,
        keys,
        values=None,
        handles=None,
        total=None,
        cut=True,
        ended=None,
        empty_after=None,
        work=None,
    ):
        """Logs up to `block` keys; a longer vector (a whole file at once) logs its last ones.

        `total` is the size of `keys`, where the caller has it; `cut=False` where `keys`
        are known to be a block at most; `ended` (a bool), whether a work item finished.
        `empty_after`: the work items finished with no record read at all past which the
        read fails, naming `work` (the items are read again forever: see `_never_empty`).
        """
        count, rows = handles or self.handles()
        if total is None:
            total = tf.size(keys, out_type=tf.int64)
        some = total > 0
        ended = tf.zeros([], tf.int64) if ended is None else tf.cast(ended, tf.int64)
        counts = tf.stack([tf.cast(some, tf.int64), total, ended])
        with tf.control_dependencies([graph_ops.AssignAddVariableOp(resource=count, value=counts)]):
            # Two blocks logged at once may share a row; then one of them is not named.
            blocks, records, _ = graph_ops.Unpack(
                value=graph_ops.ReadVariableOp(resource=count, dtype=tf.int64), num=3
            )
        # An empty block (the end of a file) goes to the unread row: without a cond, which
        # costs every pipeline a function more.
        row = tf.where(some, (blocks - 1) % _BLOCKS, _BLOCKS)
        logged = tf.minimum(total, self._block) if cut else total
        if values is None and self._with_values:
            values = tf.fill(tf.shape(keys), "")
        if cut:
            keys, values = (
                keys[-self._block :],
                values[-self._block :] if self._with_values else None,
            )
        parts = [_joined(keys, _KEYS_APART)]
        if self._with_values:
            parts.append(_joined(values, _LINES_APART))
        parts += [tf.strings.as_string(records - logged), tf.strings.as_string(logged)]
        logged = graph_ops.ResourceScatterUpdate(
            resource=rows, indices=row, updates=tf.stack(parts)
        )
        return logged if ended is None else _never_empty(logged, count, empty_after, work)

    def log_one(self, key: tf.Tensor, handles=None) -> tf.Operation:
        """`log` of one record that is its work item whole (WholeFileReader): the same row
        and counts in 10 ops, where `log` takes 22 for blocks of any size (a JPEG's record
        cost 66 us in the reader, now 59; it runs once per example)."""
        count, rows = handles or self.handles()
        one_each = tf.constant([1, 1, 1], tf.int64)  # A block, a record, a work item.
        with tf.control_dependencies(
            [graph_ops.AssignAddVariableOp(resource=count, value=one_each)]
        ):
            blocks, records, _ = graph_ops.Unpack(
                value=graph_ops.ReadVariableOp(resource=count, dtype=tf.int64), num=3
            )
        parts = [key, tf.strings.as_string(records - 1), tf.constant("1")]
        if self._with_values:
            parts.insert(1, tf.constant(""))
        row = (blocks - 1) % _BLOCKS
        return graph_ops.ResourceScatterUpdate(resource=rows, indices=row, updates=tf.stack(parts))

    def records(self, values) -> tuple:
        """`(logged, {key: value})` of a snapshot, or `(logged, None)` where values are not
        logged; `logged` holds the `(position, key)` of each record, oldest first (positions
        never repeat). Each row is split once."""
        logged: list = []
        found = {} if self._with_values else None
        for row in self._rows_of(*values):
            keys = [k.decode("utf-8", "replace") for k in _split(row[0], _KEYS_APART, row) or ()]
            first = int(row[-2] or 0)
            logged += [(first + i, key) for i, key in enumerate(keys)]
            lines = _split(row[1], _LINES_APART, row) if found is not None and keys else None
            if lines is not None:
                found.update(zip(keys, lines))
        return logged, found

    @staticmethod
    def _rows_of(count, rows) -> list:
        blocks = int(count[0])
        return [rows[number % _BLOCKS] for number in range(max(0, blocks - _BLOCKS), blocks)]


# What joins a block's keys (paths hold no NUL) and its text lines (which hold no newline).
_KEYS_APART = "\0"
_LINES_APART = "\n"


def _never_empty(counted: tf.Operation, count, empty_after, work) -> tf.Operation:
    """`counted`, then a check that fails the read once `empty_after` work items finished
    with no record read from any: every file is empty, and its producer hands them out
    forever (num_epochs=None), so that legacy's reader read them again and again and its
    batcher waited forever. Margin: a reader sharing its producer may miss the one file
    that holds records a few times, never `empty_after` (four times the files) in a row."""
    if empty_after is None:
        return counted
    with tf.control_dependencies([counted]):
        _, records, finished = graph_ops.Unpack(
            value=graph_ops.ReadVariableOp(resource=count, dtype=tf.int64), num=3
        )
    message = (
        f"compat_input: a reader read {empty_after} files of its producer (num_epochs=None: "
        "the same files again and again) and found not one record; the last:"
    )
    hint = (
        "- every file is empty or holds no record, and reading on would wait forever "
        "(legacy's reader read them forever and delivered nothing). Give files that hold "
        "records, or num_epochs to end the input."
    )
    fine = tf.logical_or(records > 0, finished < empty_after)
    return tf.debugging.Assert(fine, [message, work, hint])


def _joined(strings: tf.Tensor, apart: str) -> tf.Tensor:
    # The raw op: `tf.strings.reduce_join` works out the axes with three ops more.
    return graph_ops.ReduceJoin(inputs=strings, reduction_indices=0, separator=apart)


def _split(joined: bytes, apart: str, row) -> Optional[list]:
    """The `row`'s parts joined in `joined`, or None where one held the separator (a key
    made of a work item with a NUL in it: that block is not named, rather than misnamed)."""
    logged = int(row[-1] or 0)
    if logged < 2:  # Nothing to split (one work item, a whole file: any bytes).
        return [joined] if logged else []
    parts = joined.split(apart.encode())
    return parts if len(parts) == logged else None
