"""Origins: which record an example came from, so that errors can name it.

A legacy error from a bad record said "record 0" (the index inside one op's input), never
the file. tf.data cannot catch an error inside a map function, and its message names
neither, so compat_input keeps, per pipeline, a small in-graph log of the examples in
flight and of the files open, and when `sess.run` raises from a pipeline the error is
raised again, same type, with the record named first:

- `ExampleLog`: a ring of `(ordinal, origin)` written as each example enters the
  per-example graph, and its ordinal again when it leaves. tf.data delivers results in
  order, so the failing example is the oldest one that entered and never left. Its origin
  is the reader key (`file:line`, `file:byte offset`, `file:record index`), else the first
  string the source yields (a file name from a producer), else its ordinal.
- `OpenedFiles`: the last work items each reader opened, for errors raised while reading
  (a corrupted TFRecord, a truncated GZIP stream), where no example exists: the recent
  files are read again after the error until one fails the same way.

Under `bad_records="skip"` the map runs one example at a time, so an example that entered
and did not leave before the next one entered was skipped: the first such origin is kept
for `compat_input.first_skipped_record`, and each is logged as it is found.

The logs are read only after an error, from the session that raised it.
"""

import dataclasses
import re
import sys
from typing import Optional

import tensorflow as tf
from tensorflow.python.client import session as session_lib

tf1 = tf.compat.v1

# More than the examples a pipeline can have in flight (parallel calls times a block).
_RING = 4096
_FILES = 16

_COUNTED = " (counted from 0 since the pipeline started)"


def _variable(value, name: str) -> tf.Variable:
    return tf1.Variable(
        value,
        trainable=False,
        collections=[],
        use_resource=True,
        name=name,
    )


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
    """The examples of one stream in flight: see the module docstring."""

    def __init__(self, kind: Optional[str], skipping: bool, block: int = 1):
        from compat_input._src import pipeline as pipeline_lib  # Cycle: pipelines hold logs.

        self.kind = kind
        self.skipping = skipping
        self.block = block  # Examples that enter the graph together (a vectorized block).
        with tf1.name_scope("origins"):
            self._origins = _variable(tf.fill([_RING], ""), "origins")
            self._entered = _variable(tf.fill([_RING], tf.constant(-1, tf.int64)), "entered")
            self._left = _variable(tf.fill([_RING], tf.constant(-1, tf.int64)), "left")
            self._first_skipped = _variable(tf.constant(""), "first_skipped")
            self.snapshot = (
                self._entered.read_value(),
                self._left.read_value(),
                self._origins.read_value(),
            )
            self.first_skipped = self._first_skipped.read_value()
        pipeline_lib.needs_initialization(
            [self._origins, self._entered, self._left, self._first_skipped]
        )

    def enter(self, ordinals: tf.Tensor, origins: tf.Tensor) -> tf.Operation:
        """Logs examples (a scalar or a block) as they enter the per-example graph."""
        slots = ordinals % _RING
        checks = [self._note_skipped(ordinals)] if self.skipping else []
        with tf.control_dependencies(checks):
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

    def failing(self, values, message: str, reported: set) -> Optional[str]:
        """The origin of the oldest example that entered and never left, from `snapshot`.

        Under a vectorized map a whole block enters and fails together; the op's own
        "record N" then says which example of the block it was, when the op says it.
        """
        entered, left, origins = values
        stuck = sorted(
            (int(came), origin.decode("utf-8", "replace"))
            for came, went, origin in zip(entered, left, origins)
            if came >= 0 and came != went and int(came) not in reported
        )
        if not stuck:
            return None
        first = stuck[0][0]
        block = [s for s in stuck if s[0] < first - first % self.block + self.block]
        if len(block) == 1 or self.block == 1:
            reported.add(first)
            return describe(stuck[0][1], self.kind, first)
        index = re.search(r"\bin record (\d+)\b", message)
        if index and int(index.group(1)) < len(block):
            ordinal, origin = block[int(index.group(1))]
            reported.update(o for o, _ in block)
            return describe(origin, self.kind, ordinal)
        reported.update(o for o, _ in block)
        return (
            f"one of the {len(block)} examples decoded together, from "
            f"{describe(block[0][1], self.kind, block[0][0])} to "
            f"{describe(block[-1][1], self.kind, block[-1][0])}"
        )


class OpenedFiles:
    """The last work items a reader opened, to find the file a reading error came from.

    Reading goes on ahead of the program after an error, so the file being read when
    the error reaches Python may be a later one: the recent files are read again, most
    recent first, until one fails the same way.
    """

    def __init__(self, replay):
        from compat_input._src import pipeline as pipeline_lib

        self._replay = replay  # path -> the OpError reading it raises, or None
        with tf1.name_scope("opened_files"):
            self._names = _variable(tf.fill([_FILES], ""), "names")
            self._order = _variable(tf.fill([_FILES], tf.constant(-1, tf.int64)), "order")
            self.snapshot = (self._order.read_value(), self._names.read_value())
        pipeline_lib.needs_initialization([self._names, self._order])

    def opened(self, index: tf.Tensor, work: tf.Tensor) -> tf.Operation:
        slot = index % _FILES
        return tf.group(
            tf.raw_ops.ResourceScatterUpdate(
                resource=self._names.handle, indices=slot, updates=work
            ),
            tf.raw_ops.ResourceScatterUpdate(
                resource=self._order.handle, indices=slot, updates=index
            ),
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


@dataclasses.dataclass
class Origins:
    """What one pipeline can tell about a failure: its example logs and its readers."""

    logs: list = dataclasses.field(default_factory=list)
    files: list = dataclasses.field(default_factory=list)
    # Ordinals already named in an error, so an error caught and run past is not named
    # again for the next one.
    reported: set = dataclasses.field(default_factory=set)

    def fetches(self) -> list:
        return [log.snapshot for log in self.logs] + [f.snapshot for f in self.files]

    def explain(self, values: list, error: tf.errors.OpError) -> Optional[str]:
        message = error.message
        logs, files = values[: len(self.logs)], values[len(self.logs) :]
        # Errors inside the per-example graph come from ops under this name scope; others
        # (a corrupted file) come from the reading, where no example exists yet.
        if EXAMPLE_SCOPE in message:
            found = [log.failing(v, message, self.reported) for log, v in zip(self.logs, logs)]
            found = [f for f in found if f]
            if len(found) == 1:
                return f"failed on the example read from {found[0]}"
            if found:
                return f"failed on the example read from one of {', '.join(found)}"
            return None
        for f, v in zip(self.files, files):
            path = f.culprit(v, error)
            if path:
                return f"failed reading {path}"
        return None


# Every op of the per-example graph is made under this scope (see batching.py).
EXAMPLE_SCOPE = "compat_input_example"

_LOCATED = (
    tf.errors.InvalidArgumentError,
    tf.errors.DataLossError,
    tf.errors.NotFoundError,
    tf.errors.UnknownError,
    tf.errors.UnimplementedError,
    tf.errors.PermissionDeniedError,
    tf.errors.FailedPreconditionError,
    tf.errors.ResourceExhaustedError,
)


def _locate(sess, fetches, error: tf.errors.OpError, run) -> Optional[tf.errors.OpError]:
    """`error` again, its message starting with the record it came from; None if unknown."""
    from compat_input._src import iteration  # Cycle: iteration walks pipelines.

    if not isinstance(error, _LOCATED) or getattr(error, "_compat_input_located", False):
        return None
    pipelines = [p for p in iteration.pipelines_behind(fetches) if p.origins is not None]
    named = [
        p
        for p in pipelines
        if any(re.search(rf"\b{re.escape(n)}\b", error.message) for n in p.read_op_names)
    ]
    if len(pipelines) > 1:
        pipelines = named
    if len(pipelines) != 1:
        return None
    pipeline = pipelines[0]
    origins = pipeline.origins
    try:
        values = run(sess, origins.fetches())
    except (tf.errors.OpError, RuntimeError):
        return None  # A closed session, uninitialized logs: the error stays as it was.
    where = origins.explain(values, error)
    if where is None:
        return None
    message = f"compat_input pipeline '{pipeline.name}' {where}:\n{error.message}"
    try:
        located = type(error)(error.node_def, error.op, message)
    except TypeError:
        return None
    located._compat_input_located = True
    return located


def _install_session_hook() -> None:
    """Wraps `Session.run` to name the bad record in errors raised from pipelines.

    Nothing changes on the success path but a try block; the wrapper only acts on an
    error whose fetches read a compat_input pipeline.
    """
    base = session_lib.BaseSession
    if getattr(base.run, "_compat_input", False):
        return
    original = base.run

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        try:
            return original(self, fetches, feed_dict, options, run_metadata)
        except tf.errors.OpError as error:
            located = _locate(self, fetches, error, original)
            if located is None:
                raise
            raise located.with_traceback(error.__traceback__) from None

    run._compat_input = True
    run.__doc__ = original.__doc__
    run.__wrapped__ = original
    base.run = run


_install_session_hook()
