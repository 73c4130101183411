"""Origins: which record an example came from, so that errors can name it.

A legacy error from a bad record said "record 0", never the file. tf.data cannot catch an
error inside a map function, and a stateful op per example would cost microseconds on
every example. So the hot path logs a block at a time, and the work happens after an
error reaches `sess.run`: it is raised again, same type, with the record named first.

- Each reader logs its recent records and the files it opened (reader_logs.py). After an
  error in the per-example graph, those records (read again where not logged) run
  through that graph (a `Probe`), those after the examples the program took first: the
  oldest that fails is the bad record, named by its legacy key (`file:line`, byte
  offset, record index). A producer's Python-valued work items (file names) are probed
  the same way. An error raised while reading is named from the reader's note of the
  file it opened again (a corrupted TFRecord, inputs/tfrecords.py), or by reading the recent
  files again until one fails the same way.
- The final partial batch: with `allow_smaller_final_batch`, legacy delivered the
  examples read before a bad one that did not fill a batch; tf.data's batch drops them.
  The probe ran them, so `Suspect.final_batch` gives them back (located_errors.py feeds
  them to the failed step).
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

from compat_input._src.bad_records import reader_logs
from compat_input._src.bad_records.probes import Probe
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing
from compat_input._src.core.state_variables import initial
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1

# Examples in flight under "skip" (one at a time): far fewer than this.
_RING = 64

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
                graph_ops.ResourceScatterUpdate(
                    resource=self._origins.handle, indices=slots, updates=origins
                ),
                graph_ops.ResourceScatterUpdate(
                    resource=self._entered.handle, indices=slots, updates=ordinals
                ),
            )

    def leave(self, ordinals: tf.Tensor) -> tf.Operation:
        return graph_ops.ResourceScatterUpdate(
            resource=self._left.handle, indices=ordinals % _RING, updates=ordinals
        )

    def _note_skipped(self, ordinal: tf.Tensor) -> tf.Operation:
        # One example at a time under "skip": the previous one either left or failed.
        previous = ordinal - 1
        slot = tf.maximum(previous, 0) % _RING
        entered = graph_ops.ResourceGather(
            resource=self._entered.handle, indices=slot, dtype=tf.int64
        )
        left = graph_ops.ResourceGather(resource=self._left.handle, indices=slot, dtype=tf.int64)
        failed = tf.logical_and(tf.equal(entered, previous), tf.not_equal(left, previous))
        failed = tf.logical_and(failed, previous >= 0)

        def note():
            origin = graph_ops.ResourceGather(
                resource=self._origins.handle, indices=slot, dtype=tf.string
            )
            origin = tf.where(
                tf.equal(origin, ""),
                tf.strings.join(["example ", tf.strings.as_string(previous), _COUNTED]),
                origin,
            )
            first = self._first_skipped.read_value()
            keep = graph_ops.AssignVariableOp(
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


@dataclasses.dataclass
class Suspect:
    """One input list of a batcher: its per-example graph and the source it reads."""

    examples: Any  # element -> examples
    source: Any  # pipeline.Source
    probe: Optional[Probe] = None
    # What `examples` computes, where its function is shared (tracing.shared_map).
    key: Optional[str] = None
    # Examples the program took so far, where those are the records read, in order
    # (batchers/batch_plan.py): the bad one comes after them, so the probe starts there.
    batched: Any = None
    near: int = 256  # How far after those the bad one is looked for first.
    # Positions probed that passed: no example is run through the probe twice.
    passed: set = dataclasses.field(default_factory=set)
    # The read of `batched`, made with the probe.
    taken: Any = None
    # Where the batcher keeps its last example's fingerprint (batchers/batch_plan.py), and its batch
    # size: the examples a failed batch gathered before the bad one are then found again.
    last_taken: Any = None
    size: int = 0
    # Of the last search: positions in read order, where the failure came, and the
    # fingerprints and values of those probed near the examples taken.
    order: list = dataclasses.field(default_factory=list)
    at: Optional[int] = None  # In `order`: the first record after those gathered.
    start: int = 0  # Examples taken, as counted then.
    probed: dict = dataclasses.field(default_factory=dict)

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

    def _make_probe(self, sess) -> None:
        if self.probe is None:
            # Every op it needs made before the first run: each run after a graph change
            # sends the grown graph to the session again.
            with sess.graph.as_default():
                specs = tf.nest.flatten(self.source.dataset.element_spec)
                self.probe = Probe(self.examples, specs, self.key, self.last_taken is not None)
                self.taken = None if self.batched is None else self.batched.value()
                if self.last_taken is not None:
                    self.last_taken.value()
                if self.source.reader is not None:  # Its reads made now, with the others.
                    for variable in self.source.reader.recent.snapshot:
                        variable.value()

    def first_failing(self, run, sess, reported: set, read: dict) -> Optional[str]:
        """The oldest recent element that fails and was not named in an earlier error.

        `read` holds the candidates already read for a source, by its id: lists that
        share one stream (a `_join`) read its records again only once.
        """
        self._make_probe(sess)
        key = id(self.source)
        if key in read:
            taken = run(sess, self.taken) if self.taken is not None else None
        else:
            read[key], taken = self.candidates(run, sess, self.taken)
        found = read[key]
        if found is None:
            return None
        positions, origins, columns = found
        self.order, self.at, self.probed = positions, None, {}
        start = self.start = int(taken) if taken is not None else 0
        # First those just after what the program took (each probe run costs a function
        # instantiation, so they go in one run), then the others.
        fresh = [i for i, p in enumerate(positions) if p not in self.passed]
        # The batch being made first (each example probed costs its per-example graph, a
        # py_func's Python too), then the rest of the window, then the others.
        # With the last example taken, whose fingerprint marks where the batch began.
        low = start - (self.last_taken is not None)
        first = [i for i in fresh if low <= positions[i] < start + self.near // 2]
        near = [i for i in fresh if start + self.near // 2 <= positions[i] < start + self.near]
        rest = [i for i in fresh if not low <= positions[i] < start + self.near]
        for indices, keep in ((first, True), (near, True), (rest, False)):
            if not indices:
                continue
            keep = keep and self.last_taken is not None
            failing = self.probe.failing(run, sess, [c[indices] for c in columns], keep)
            if keep:
                failing, probed = failing
                self.probed.update((positions[indices[n]], v) for n, v in probed.items())
            failing = set(failing)
            for n, index in enumerate(indices):
                if n not in failing:
                    self.passed.add(positions[index])
                elif (id(self.source), positions[index]) not in reported:
                    reported.add((id(self.source), positions[index]))
                    self.at = index
                    return describe(origins[index], self.source.key_kind, index)
        return None

    def damaged(self, run, sess, key: str) -> None:
        """Probes the records read before the damage a reader noted at `key` (`file:offset`),
        for `final_batch`: the last of them is the last of that file read before its
        offset, after the examples taken."""
        self._make_probe(sess)
        found, taken = self.candidates(run, sess, self.taken)
        if found is None or not self.probe.has_values:
            return
        positions, origins, columns = found
        self.order, self.at, self.probed = positions, None, {}
        self.start = int(taken) if taken is not None else 0
        path, _, offset = key.rpartition(":")

        def before(i):  # Record i's offset if it is of that file and before the damage.
            file, _, at = origins[i].rpartition(":") if i < len(origins) else ("", "", "")
            return int(at) if file == path and int(at) < int(offset) else None

        ends = [
            i + 1
            for i in range(len(origins))
            if before(i) is not None
            and (before(i + 1) is None or before(i + 1) <= before(i))
            and positions[i] >= self.start - 1
        ]
        if not ends:
            return
        self.at = ends[0]
        window = list(range(max(0, self.at - self.size - 1), self.at))
        _, probed = self.probe.failing(run, sess, [c[window] for c in columns], True)
        self.probed = {positions[window[n]]: v for n, v in probed.items()}

    def final_batch(self, run, sess) -> Optional[list]:
        """The examples the failed batch had gathered before the bad one (or the damage), as
        columns: the final partial batch legacy delivered; None unless known for certain.

        They are the records read after the last example taken (found by its
        fingerprint) and before the bad one, each probed once already.
        """
        if self.last_taken is None or self.at is None or not self.probed:
            return None
        at = self.at
        last = run(sess, self.last_taken.value()).tobytes()
        starts = [
            a + 1
            for a in range(max(0, at - self.size), at)
            if self.probed.get(self.order[a], (None,))[0] == last
        ]
        if not any(last) and self.order[0] == 0 and at < self.size:
            starts.append(0)  # Nothing taken yet: the batch began with the first record.
        if len(starts) > 1:  # Examples alike: the batch began after the examples taken.
            starts = [i for i in starts if self.order[i] == self.start]
        if len(starts) != 1:
            return None
        # Read in order since the last taken, each probed.
        gathered = self.order[starts[0] : at]
        if not gathered or gathered != list(range(gathered[0], gathered[0] + len(gathered))):
            return None
        if any(p not in self.probed for p in gathered):
            return None
        examples = [self.probed[p][1] for p in gathered]
        return [np.stack(column) for column in zip(*examples)]


@dataclasses.dataclass
class Origins:
    """What one pipeline can tell about a failure: its input lists and its readers."""

    suspects: list = dataclasses.field(default_factory=list)
    readers: list = dataclasses.field(default_factory=list)
    logs: list = dataclasses.field(default_factory=list)  # Under bad_records="skip".
    # Records named in earlier errors: a program that catches an error and goes on gets
    # the next bad record named next.
    reported: set = dataclasses.field(default_factory=set)
    # The batcher's output tensors, where a final partial batch can be delivered after a
    # bad example (batchers/batch_plan.py): values fed to them stand for the lost batch.
    outputs: Optional[list] = None

    # The key (`file:offset`) of the damage the last error came from, if it did.
    damage: Optional[str] = None

    def final_batch(self, run, sess) -> Optional[list]:
        """Values for `outputs`: the examples before the bad one (or the damage) that the
        failed batch lost."""
        if self.outputs is None or len(self.suspects) != 1:
            return None
        if self.damage is not None:
            self.suspects[0].damaged(run, sess, self.damage)
        return self.suspects[0].final_batch(run, sess)

    def explain(self, run, sess, error: tf.errors.OpError) -> Optional[str]:
        self.damage = None
        for suspect in self.suspects:
            suspect.at = None
        # Errors inside the per-example graph come from ops under this name scope; others
        # (a corrupted file) come from the reading, where no example exists yet.
        if tracing.EXAMPLE_SCOPE in error.message:
            read: dict = {}
            for suspect in self.suspects:
                found = suspect.first_failing(run, sess, self.reported, read)
                if found:
                    return f"failed on the example read from {found}"
            return None
        # A reader that opened a file again at the end of its records noted where: one
        # record read again there tells whether that was the failure.
        noting = [reader for reader in self.readers if reader.reading is not None]
        noted = run(sess, [reader.reading for reader in noting]) if noting else []
        for reader, keys in zip(noting, noted):
            for key in keys:
                key = key.decode("utf-8", "replace")
                again = reader.check_at(key) if key else None
                if type(again) is type(error) and reader_logs.same_failure(
                    again.message, error.message
                ):
                    self.damage = key
                    return f"failed reading {describe(key, reader._key_kind, 0)}"
        for reader in self.readers:
            path = reader.opened.culprit(run(sess, reader.opened.snapshot), error)
            if path:
                return f"failed reading {path}"
        return None
