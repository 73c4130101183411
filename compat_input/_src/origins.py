"""Origins: which record an example came from, so that errors can name it.

A legacy error from a bad record said "record 0", never the file. tf.data cannot catch an
error inside a map function, and a stateful op per example would cost microseconds on
every example. So the hot path logs a block at a time, and the work happens after an
error reaches `sess.run`: it is raised again, same type, with the record named first.

- `RecentRecords`: each reader logs the keys (text: and lines) of its last blocks of
  records, one op per block of 256. After an error in the per-example graph, those
  records (read again where not logged) run through that graph (a `Probe`), those after
  the examples the program took first: the oldest that fails is the bad record, named by
  its legacy key (`file:line`, byte offset, record index). A producer's Python-valued
  work items (file names) are probed the same way.
- `OpenedFiles`: the last files each reader opened, for errors raised while reading
  (a corrupted TFRecord is named from its reader's note, tfrecords.py; others, such as a
  truncated GZIP stream, by reading the recent files again until one fails the same way).
- `ExampleLog`: only under `bad_records="skip"`, where the map already runs one example
  at a time: a ring of the examples in flight, so that an example that entered and did
  not leave before the next one entered is known skipped; the first is kept for
  `compat_input.first_skipped_record`, and each is logged as it is found.
"""

import dataclasses
import sys
from typing import Any
from typing import Optional

import numpy as np
import tensorflow as tf

from compat_input._src import pipeline as pipeline_lib
from compat_input._src.probes import Probe
from compat_input._src.state_variables import initial

tf1 = tf.compat.v1

# Examples in flight under "skip" (one at a time): far fewer than this.
_RING = 64
# Files and blocks of records kept: more than a pipeline reads ahead of the program.
_FILES = 16
_BLOCKS = 16

_COUNTED = " (counted from 0 since the pipeline started)"


def _variable(value, name: str) -> tf.Variable:
    return pipeline_lib.state_variable(value, name)


def describe(origin: str, kind: Optional[str], ordinal: int) -> str:
    """The origin as a person reads it: `a.csv:17`, `b.tfr at byte offset 1234`, ...

    `kind` says what the number in a reader key `file:number` is: "line" (text readers),
    "offset" (TFRecords), "index" (fixed-length records), or None (not a reader key).
    """
    if not origin:
        return f"example {ordinal}{_COUNTED}"
    if kind is None or kind == "line" or ":" not in origin:
        return origin
    path, _, number = origin.rpartition(":")
    if kind == "offset":
        return f"{path} at byte offset {number}"
    return f"{path}, record {number} (counted from 0)"


class ExampleLog:
    """The examples of one stream in flight, under bad_records="skip"."""

    def __init__(self, kind: Optional[str]):
        self.kind = kind
        with tf1.name_scope("origins"):
            self._origins = _variable(initial("", tf.string, [_RING]), "origins")
            self._entered = _variable(initial(-1, tf.int64, [_RING]), "entered")
            self._left = _variable(initial(-1, tf.int64, [_RING]), "left")
            self._first_skipped = _variable(initial("", tf.string), "first_skipped")
            # Fetched as values (read ops made on first use).
            self.snapshot = (self._entered, self._left, self._origins)
            self.first_skipped = self._first_skipped

    def enter(self, ordinals: tf.Tensor, origins: tf.Tensor) -> tf.Operation:
        """Logs an example as it enters the per-example graph."""
        slots = ordinals % _RING
        with tf.control_dependencies([self._note_skipped(ordinals)]):
            return tf.group(
                tf.raw_ops.ResourceScatterUpdate(
                    resource=self._origins.handle, indices=slots, updates=origins
                ),
                tf.raw_ops.ResourceScatterUpdate(
                    resource=self._entered.handle, indices=slots, updates=ordinals
                ),
            )

    def leave(self, ordinals: tf.Tensor) -> tf.Operation:
        return tf.raw_ops.ResourceScatterUpdate(
            resource=self._left.handle, indices=ordinals % _RING, updates=ordinals
        )

    def _note_skipped(self, ordinal: tf.Tensor) -> tf.Operation:
        # One example at a time under "skip": the previous one either left or failed.
        previous = ordinal - 1
        slot = tf.maximum(previous, 0) % _RING
        entered = tf.raw_ops.ResourceGather(
            resource=self._entered.handle, indices=slot, dtype=tf.int64
        )
        left = tf.raw_ops.ResourceGather(resource=self._left.handle, indices=slot, dtype=tf.int64)
        failed = tf.logical_and(tf.equal(entered, previous), tf.not_equal(left, previous))
        failed = tf.logical_and(failed, previous >= 0)

        def note():
            origin = tf.raw_ops.ResourceGather(
                resource=self._origins.handle, indices=slot, dtype=tf.string
            )
            origin = tf.where(
                tf.equal(origin, ""),
                tf.strings.join(["example ", tf.strings.as_string(previous), _COUNTED]),
                origin,
            )
            first = self._first_skipped.read_value()
            keep = tf.raw_ops.AssignVariableOp(
                resource=self._first_skipped.handle,
                value=tf.where(tf.equal(first, ""), origin, first),
            )
            said = tf.print(
                tf.strings.join(["compat_input: skipped a bad record: ", origin]),
                output_stream=sys.stderr,
            )
            with tf.control_dependencies([keep, said]):
                return tf.constant(True)

        return tf.cond(failed, note, lambda: tf.constant(False)).op

    def last_failed(self, values) -> Optional[str]:
        """The origin of the oldest example that entered and never left, from `snapshot`."""
        entered, left, origins = values
        stuck = sorted(
            (int(came), origin.decode("utf-8", "replace"))
            for came, went, origin in zip(entered, left, origins)
            if came >= 0 and came != went
        )
        return describe(stuck[0][1], self.kind, stuck[0][0]) if stuck else None


class OpenedFiles:
    """The last work items a reader opened, to find the file a reading error came from.

    Reading goes on ahead of the program after an error, so the file being read when
    the error reaches Python may be a later one: the recent files are read again, most
    recent first, until one fails the same way.
    """

    def __init__(self, replay):
        self._replay = replay  # path -> the OpError reading it raises, or None
        with tf1.name_scope("opened_files"):
            self._names = _variable(initial("", tf.string, [_FILES]), "names")
            self._order = _variable(initial(-1, tf.int64, [_FILES]), "order")
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
            if type(again) is type(error) and _same_failure(again.message, error.message):
                return path
        return None


def _same_failure(replayed: str, original: str) -> bool:
    """Whether the replayed error's own words appear in the original message."""
    for line in replayed.splitlines():
        line = line.strip()
        if len(line) > 10 and not line.startswith("[[") and not line.endswith(":"):
            if line in original:
                return True
    return False


class RecentRecords:
    """The keys of the last records a reader produced, logged a block at a time."""

    def __init__(self, block: int, with_values: bool = False):
        self._block = block
        with tf1.name_scope("recent_records"):
            # One row more than are read: where an empty block is written, unread.
            self._keys = _variable(initial("", tf.string, [_BLOCKS + 1, block]), "keys")
            self._count = _variable(initial(0, tf.int64), "blocks")
            self.snapshot = (self._count, self._keys)  # Fetched as values.
            # Small records (text lines) are kept too: naming a bad one then reads no file.
            self._values = None
            if with_values:
                self._values = _variable(initial("", tf.string, [_BLOCKS + 1, block]), "values")
                self.snapshot += (self._values,)

    def handles(self) -> list:
        """What `log` writes: passed to a function traced once for every reader."""
        logs = [self._count.handle, self._keys.handle]
        return logs + ([self._values.handle] if self._values is not None else [])

    def log(self, keys: tf.Tensor, values=None, handles=None) -> tf.Operation:
        """Logs up to `block` keys; a longer vector (a whole file at once) logs its last ones."""
        count, logged_keys, *logged_values = handles or self.handles()
        if logged_values and values is not None:
            with tf.control_dependencies([self._log(count, logged_values[0], values)]):
                keys = tf.identity(keys)
        return self._log(count, logged_keys, keys, bump=True)

    def _log(self, count, variable, keys: tf.Tensor, bump: bool = False) -> tf.Operation:
        keys = keys[-self._block :]
        # An empty block (the end of a file) is not counted and goes to the unread row:
        # without a cond, which costs every pipeline a function more.
        some = tf.cast(tf.size(keys) > 0, tf.int64)
        if bump:
            with tf.control_dependencies(
                [tf.raw_ops.AssignAddVariableOp(resource=count, value=some)]
            ):
                # Two blocks logged at once may share a row; then one of them is not named.
                row = (tf.raw_ops.ReadVariableOp(resource=count, dtype=tf.int64) - 1) % _BLOCKS
        else:  # Values go first, into the row their keys go to next.
            row = tf.raw_ops.ReadVariableOp(resource=count, dtype=tf.int64) % _BLOCKS
        row = tf.where(some > 0, row, _BLOCKS)
        padded = tf.pad(keys, [[0, self._block - tf.size(keys)]], constant_values="")
        return tf.raw_ops.ResourceScatterUpdate(
            resource=variable,
            indices=tf.reshape(row, [1]),
            updates=tf.reshape(padded, [1, self._block]),
        )

    def records(self, values) -> tuple:
        """`(keys(values), {key: value})`, or `(keys, None)` where values are not logged."""
        logged = self.keys(values[:2])
        if self._values is None:
            return logged, None
        count, rows = int(values[0]), values[2]
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
        count = int(count)
        return [
            (number * self._block + i, key.decode("utf-8", "replace"))
            for number in range(max(0, count - _BLOCKS), count)
            for i, key in enumerate(rows[number % _BLOCKS])
            if key
        ]


@dataclasses.dataclass
class Suspect:
    """One input list of a batcher: its per-example graph and the source it reads."""

    examples: Any  # element -> examples
    source: Any  # pipeline.Source
    probe: Optional[Probe] = None
    # What `examples` computes, where its function is shared (tracing.shared_map).
    key: Optional[str] = None
    # Examples the program took so far, where those are the records read, in order
    # (batch_plan.py): the bad one comes after them, so the probe starts there.
    batched: Any = None
    near: int = 256  # How far after those the bad one is looked for first.
    # Positions probed that passed: no example is run through the probe twice.
    passed: set = dataclasses.field(default_factory=set)
    # The read of `batched`, made with the probe.
    taken: Any = None

    def candidates(self, run, sess, taken=None) -> tuple:
        """`(positions, origins, columns)` of the recent source elements, oldest first, or
        None; and the value of `taken`, read in the same run (each new run costs the
        session an executor)."""
        source = self.source
        reader = source.reader
        if reader is not None:
            if taken is None:
                return self._logged(reader, run(sess, reader.recent.snapshot)), None
            snapshot, taken = run(sess, (reader.recent.snapshot, taken))
            return self._logged(reader, snapshot), taken
        taken = run(sess, taken) if taken is not None else None
        if source.items:
            items = list(source.items)
            return (list(range(len(items))), items, [np.array(items, object)]), taken
        return None, taken

    @staticmethod
    def _logged(reader, snapshot) -> Optional[tuple]:
        logged, values = reader.recent.records(snapshot)
        if values is None:  # Not logged: read again from the files, where they are.
            values = reader.reread([key for _, key in logged])
        logged = [(p, k) for p, k in logged if k in values]
        if not logged:
            return None
        keys = [k for _, k in logged]
        columns = [np.array(keys, object), np.array([values[k] for k in keys], object)]
        return [p for p, _ in logged], keys, columns

    def first_failing(self, run, sess, reported: set, read: dict) -> Optional[str]:
        """The oldest recent element that fails and was not named in an earlier error.

        `read` holds the candidates already read for a source, by its id: lists that
        share one stream (a `_join`) read its records again only once.
        """
        if self.probe is None:
            # Every op it needs made before the first run: each run after a graph change
            # sends the grown graph to the session again.
            with sess.graph.as_default():
                specs = tf.nest.flatten(self.source.dataset.element_spec)
                self.probe = Probe(self.examples, specs, self.key)
                self.taken = None if self.batched is None else self.batched.read_value()
                if self.source.reader is not None:  # Its reads made now, with the others.
                    for variable in self.source.reader.recent.snapshot:
                        variable.value()
        key = id(self.source)
        if key in read:
            taken = run(sess, self.taken) if self.taken is not None else None
        else:
            read[key], taken = self.candidates(run, sess, self.taken)
        found = read[key]
        if found is None:
            return None
        positions, origins, columns = found
        start = int(taken) if taken is not None else 0
        # First those just after what the program took (each probe run costs a function
        # instantiation, so they go in one run), then the others.
        fresh = [i for i, p in enumerate(positions) if p not in self.passed]
        # The batch being made first (each example probed costs its per-example graph, a
        # py_func's Python too), then the rest of the window, then the others.
        first = [i for i in fresh if start <= positions[i] < start + self.near // 2]
        near = [i for i in fresh if start + self.near // 2 <= positions[i] < start + self.near]
        rest = [i for i in fresh if not start <= positions[i] < start + self.near]
        for indices in (first, near, rest):
            if not indices:
                continue
            failing = set(self.probe.failing(run, sess, [c[indices] for c in columns]))
            for n, index in enumerate(indices):
                if n not in failing:
                    self.passed.add(positions[index])
                elif (id(self.source), positions[index]) not in reported:
                    reported.add((id(self.source), positions[index]))
                    return describe(origins[index], self.source.key_kind, index)
        return None


@dataclasses.dataclass
class Origins:
    """What one pipeline can tell about a failure: its input lists and its readers."""

    suspects: list = dataclasses.field(default_factory=list)
    readers: list = dataclasses.field(default_factory=list)
    logs: list = dataclasses.field(default_factory=list)  # Under bad_records="skip".
    # Records named in earlier errors: a program that catches an error and goes on gets
    # the next bad record named next.
    reported: set = dataclasses.field(default_factory=set)

    def explain(self, run, sess, error: tf.errors.OpError) -> Optional[str]:
        # Errors inside the per-example graph come from ops under this name scope; others
        # (a corrupted file) come from the reading, where no example exists yet.
        if EXAMPLE_SCOPE in error.message:
            read: dict = {}
            for suspect in self.suspects:
                found = suspect.first_failing(run, sess, self.reported, read)
                if found:
                    return f"failed on the example read from {found}"
            return None
        # A reader that opened a file again at the end of its records noted where: one
        # record read again there tells whether that was the failure.
        noted = run(sess, [reader.reading for reader in self.readers])
        for reader, keys in zip(self.readers, noted):
            for key in keys:
                key = key.decode("utf-8", "replace")
                again = reader.check_at(key) if key else None
                if type(again) is type(error) and _same_failure(again.message, error.message):
                    return f"failed reading {describe(key, reader._key_kind, 0)}"
        for reader in self.readers:
            path = reader.opened.culprit(run(sess, reader.opened.snapshot), error)
            if path:
                return f"failed reading {path}"
        return None


# Every op of the per-example graph is made under this scope (see batching.py).
EXAMPLE_SCOPE = "compat_input_example"
