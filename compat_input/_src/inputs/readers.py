"""Readers: work items (file names) to `(key, value)` records, as tf.data sources.

A legacy reader was a stateful op that dequeued a work item from a producer queue when its
current one ran out. Here a reader reading a producer is the producer's Dataset flat-mapped
through the reader's per-file record Dataset, with the legacy keys rebuilt:
`file:line` (1-based, physical) for text, `file:offset` (bytes) for TFRecords,
`file:index` (0-based) for fixed-length records, the file name for whole files, the item
for identity reads. Reading a hand-built queue (not a producer of ours) falls back to
TensorFlow's own reader ops, which still work in graph mode.
"""

import tensorflow as tf

from compat_input._src.bad_records import origins
from compat_input._src.bad_records import reader_logs
from compat_input._src.bad_records import rereading
from compat_input._src.core import calls
from compat_input._src.core import dataset_ops
from compat_input._src.core import devices
from compat_input._src.core import graph_ops
from compat_input._src.core import patching
from compat_input._src.core import tracing
from compat_input._src.core.options import options
from compat_input._src.core.state_variables import initial
from compat_input._src.inputs import input_files
from compat_input._src.inputs import producers
from compat_input._src.inputs import reader_surface
from compat_input._src.inputs import shared_work
from compat_input._src.inputs import tfrecords
from compat_input._src.runtime import iterators
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1


# Records are keyed and counted a block at a time.
BLOCK = 256
# Files whose reopening a reader remembers (see `reading`): more than it reads ahead.
_NOTES = 8


def record_key(work: tf.Tensor, position: tf.Tensor) -> tf.Tensor:
    return tf.strings.join([work, tf.strings.as_string(position)], separator=":")


class ReaderBase(reader_surface.CountersAndState):
    """Shared behaviour of the reader shims; subclasses define `_records(work_item)`."""

    _legacy_class = None
    _default_name = "Reader"
    _reads_files = True
    # What the number after the file name in a key means (see origins.describe).
    _key_kind = None
    supports_serialize = False
    # Whether the recent records' values are logged with their keys (small records only).
    _logs_values = False
    # Whether `_records` counts the end of a work item itself (`bump(..., ended=...)`).
    _counts_ends = False
    # Readers of exactly one record per work item define `_record(work)` -> (key, value);
    # their stream is a map over work items, not a flat_map: a dataset made per work item
    # cost 200 us a file, which capped WholeFileReader at 4,600 JPEGs/s (legacy: 11k).
    _one_record = False
    # Whether `_records` opens files again and notes where (`note(key)`).
    _notes = False

    # Positions in a read's flat element of records that all have one length.
    _fixed_length: tuple = ()

    def __init__(self, name=None):
        pipeline_lib.check_graph_mode(type(self).__name__)
        self._name = name
        self._sources: dict = {}
        self._legacy = None
        with tf1.name_scope(name, self._default_name) as scope:
            self._scope = scope
            # Where it last opened files again, newest first, to name an error there at once
            # (bad_records/origins.py); several, as the stream runs on after an error
            # reaches the program. Only readers that open files again note it.
            self.reading = None
            if self._notes:
                noted = initial("", tf.string, [_NOTES])
                self.reading = pipeline_lib.state_variable(noted, "reading")
            # bad_records="skip": files unusable at build time; the names of those gone later.
            self.unusable: list = []
            skipping = options.bad_records == "skip"
            self.skipped_files = input_files.gone_log() if skipping else None
            self.opened = reader_logs.OpenedFiles(
                lambda path: rereading.replay(self._records, path)
            )
            # Its counts are the reader's (state in no collection, as a legacy reader's).
            self.recent = reader_logs.RecentRecords(BLOCK, with_values=self._logs_values)

    # -- what subclasses define -------------------------------------------------------------

    def _records(self, work: tf.Tensor, bump, note=None) -> tf.data.Dataset:
        """The `(key, value)` records of one work item; run `bump(keys)` as records pass.

        Readers that open a file again to check its end run `note(key)` first, with the
        record it opens at, when given. Here: the one record of `_record`.
        """
        with tf.control_dependencies([bump(work)]):
            return tf.data.Dataset.from_tensors(self._record(tf.identity(work)))

    def _record(self, work: tf.Tensor) -> tuple:
        """The one `(key, value)` record of a work item (readers with `_one_record`)."""
        raise NotImplementedError

    def _legacy_reader(self):
        if self._legacy is None:
            kwargs = self._legacy_kwargs()
            if self._name:
                # The reader's op takes legacy's name: our name scope holds `name` already, so
                # `name` alone would become `name_1`, which the reader's own errors then show
                # ("Could not parse state for IdentityReader 'name_1'"); a scope is taken as is.
                kwargs["name"] = self._scope
            with patching.tensorflows_own(self._legacy_class):
                self._legacy = self._legacy_class(**kwargs)
        return self._legacy

    def _legacy_kwargs(self) -> dict:
        return {"name": self._name}

    # -- the legacy surface -----------------------------------------------------------------

    @property
    def reader_ref(self):
        if self._legacy is not None:
            return self._legacy.reader_ref
        return self.recent.handles()[0]

    def _state(self) -> list:
        """The handles `_counted` writes, in the order it takes them."""
        own = [self.reading.handle] if self.reading is not None else []
        return own + self.opened.handles() + self.recent.handles()

    def _config(self) -> tuple:
        """Everything besides `_state` that a subclass's `_records` reads of `self`."""
        return ()

    def _counted(self, work, index, state: list, empty_after=None) -> tf.data.Dataset:
        """The records of `work`, the `index`-th work item, counted as they pass.

        Records are counted inside the reader's own per-record (or per-file) step: a map
        of its own would cost tens of microseconds per record. The file is noted as opened
        and the keys logged (bad_records/origins.py), so that an error can name its file and
        record. `state` holds the handles of `_state`: the function this runs in is traced
        once for every reader of the same kind and configuration (tracing.shared_flat_map).
        """
        reading, opened, recent = self._split_state(state)
        work = self._opening(work, index, opened)

        def bump(keys, values=None, ended=None, in_block=False):
            # Counted, and logged for error messages (bad_records/origins.py), a block at a
            # time; with `in_block`, the keys are known to be a block at most (nothing to cut).
            # `ended`: the empty block after a work item's last one.
            keys = keys if keys.shape.rank == 1 else tf.reshape(keys, [-1])
            count = tf.size(keys, out_type=tf.int64)
            cut, log = not in_block, self.recent.log
            return log(keys, values, recent, count, cut, ended, empty_after, work)

        def finish(key, value):
            # Reached once the file's records are exhausted; counts it, yields nothing.
            with tf.control_dependencies([self.recent.finished(recent, empty_after, work)]):
                return tf.constant(False)

        def note(key, when=True):
            # `when` (a bool tensor): noted only then, without a cond (its branches traced).
            noted = graph_ops.ReadVariableOp(resource=reading, dtype=tf.string)
            newest = tf.concat([tf.reshape(key, [1]), noted[: _NOTES - 1]], 0)
            newest = newest if when is True else tf.where(when, newest, noted)
            return graph_ops.AssignVariableOp(resource=reading, value=newest)

        records = self._records(work, bump, note)
        if self._counts_ends:
            return records
        done = tf.data.Dataset.from_tensors((tf.constant(""), tf.constant("")))
        done = dataset_ops.filter_(done, finish)
        return records.concatenate(done)

    def _split_state(self, state: list) -> tuple:
        """`(reading, opened, recent)` handles of `_state`'s list (reading: None where the
        reader does not note)."""
        logs = list(state)
        reading = logs.pop(0) if self.reading is not None else None
        return reading, logs[:2], logs[2:]

    def _opening(self, work: tf.Tensor, index: tf.Tensor, opened: list) -> tf.Tensor:
        """`work`, once noted as the `index`-th work item opened."""
        with tf.control_dependencies([self.opened.opened(index, work, opened)]):
            return tf.identity(work)

    def _counted_record(self, work: tf.Tensor, index: tf.Tensor, state: list) -> tuple:
        """`_counted` for readers of one record per work item: the record itself, counted
        and logged (with its work item finished) before it is read, as `_counted` does."""
        _, opened, recent = self._split_state(state)
        work = self._opening(work, index, opened)
        with tf.control_dependencies([self.recent.log_one(work, recent)]):
            return self._record(tf.identity(work))

    @tracing.without_autograph
    def _source(self, queue, up_to=None) -> pipeline_lib.Source:
        key = (id(queue), up_to)
        if key not in self._sources:
            work = queue.source
            spec = work.dataset.element_spec
            files = len(set(queue.items or ())) if self._reads_files and not work.finite else 0
            empty_after = 4 * files if files else None  # reader_logs.RecentRecords.log
            records_key = f"records_{type(self).__name__}_{self._config()}_{up_to}_{empty_after}"

            def records(element, *state, up_to=up_to):
                index, item = element
                dataset = self._counted(item, index, list(state), empty_after)
                return dataset if up_to is None else dataset.batch(up_to)

            def read(items: tf.data.Dataset) -> tf.data.Dataset:
                """The records of the work items `items`, numbered as this reader took them."""
                dataset = dataset_ops.enumerate_(items)
                if self.skipped_files is not None and self._reads_files:
                    # Files gone since the build are skipped: a function of this reader alone.
                    def checked(element, *state):
                        files = (element[1], type(self).__name__, self.unusable)
                        return input_files.skipping_unusable(
                            records(element, *state), *files, self.skipped_files
                        )

                    return tracing.shared_flat_map(dataset, None, checked, self._state())
                if self._one_record and up_to is None:

                    def record(element, *state):
                        return self._counted_record(element[1], element[0], list(state))

                    shared = f"record_{type(self).__name__}_{self._config()}"
                    return tracing.shared_map(dataset, shared, record, self._state())
                return tracing.shared_flat_map(dataset, records_key, records, self._state())

            numbered = (tf.TensorSpec([], tf.int64), spec)
            self._sources[key] = pipeline_lib.Source(
                name=f"{self._scope.rstrip('/')}",
                dataset=read(work.dataset),
                own_dataset=lambda resource: read(iterators.pulled_from(resource, spec)),
                work_source=work,
                records=lambda index, item: calls.called_dataset(
                    records_key, records, numbered, (index, item), self._state()
                ),
                interleave=lambda items, cycle: tracing.shared_flat_map(
                    items, records_key, records, self._state(), cycle_length=cycle
                ),
                finite=work.finite,
                key_kind=self._key_kind,
                fixed_length=self._fixed_length,
                reader=self,
                origins=origins.Origins(readers=[self]),
                shared_name=work.shared_name,
            )
        return self._sources[key]

    def check_at(self, key: str):
        """The error reading again at a noted `key` raises now (readers that note), or None."""
        del key
        return None

    def reread(self, keys: list) -> dict:
        """The values of the records with these legacy keys, read again
        (bad_records/rereading.py)."""
        return rereading.reread(self._records, keys, self._key_kind is not None)

    def _check_files(self, queue) -> None:
        """Errors at build time, where legacy failed later in a runner thread."""
        if not self._reads_files or queue.items is None:
            return
        if options.bad_records == "skip":
            self.unusable.extend(input_files.unusable(type(self).__name__, queue))
        heads = input_files.first_bytes(type(self).__name__, queue, self.unusable)
        for path, head in heads.items():
            self._check_file(path, head)

    def _check_file(self, path: str, head: bytes) -> None:
        del path, head  # Readers with file-format expectations override this.

    @devices.made_on_host
    def read(self, queue, name=None):
        """Returns `(key, value)` of the next record; each run reads one record."""
        if not isinstance(queue, producers.InputQueue):
            return self._legacy_reader().read(queue, name=name)
        self._check_files(queue)
        return self._read_directly(self._source(queue), name)

    @devices.made_on_host
    def read_up_to(self, queue, num_records, name=None):
        """Up to `num_records` `(keys, values)`, never crossing a work item, as legacy."""
        if not isinstance(queue, producers.InputQueue):
            return self._legacy_reader().read_up_to(queue, num_records, name=name)
        self._check_files(queue)
        return self._read_directly(self._source(queue, up_to=num_records), name)

    def _read_directly(self, source: pipeline_lib.Source, name) -> tuple:
        tensors = tuple(source.element_tensors(name=name))
        shared_work.share(source.pipeline)
        return tensors


class TextLineReader(ReaderBase):
    """Drop-in replacement for `tf.compat.v1.TextLineReader`.

    Differences: reading a compat_input producer yields tf.data records (same keys, same
    lines, `\\r\\n` stripped, blank lines kept).
    """

    _legacy_class = tf1.TextLineReader
    _default_name = "TextLineReader"
    _key_kind = "line"
    _logs_values = True
    _counts_ends = True

    def __init__(self, skip_header_lines=None, name=None):
        self._skip = skip_header_lines or 0
        super().__init__(name=name)

    def _legacy_kwargs(self):
        return {"skip_header_lines": self._skip or None, "name": self._name}

    def _config(self):
        return (self._skip,)

    def _records(self, work, bump, note=None):
        skip = self._skip

        def block(index, lines):
            # Keys for a whole block at once: a step per line costs tens of microseconds.
            count = tf.size(lines, out_type=tf.int64)
            keys = record_key(work, skip + index * BLOCK + 1 + tf.range(count, dtype=tf.int64))
            # The file's end is an empty block numbered -1, counted here: one function
            # for the pipeline to instantiate, not one more for the end.
            with tf.control_dependencies([bump(keys, lines, ended=index < 0, in_block=True)]):
                return tf.identity(keys), tf.identity(lines)

        lines = dataset_ops.one_file(graph_ops.TextLineDataset, work)
        blocks = dataset_ops.enumerate_(lines.skip(skip).batch(BLOCK))
        end = tf.data.Dataset.from_tensors((tf.constant(-1, tf.int64), tf.zeros([0], tf.string)))
        keyed = tracing.shared_map(blocks.concatenate(end), None, dataset_ops.components(block))
        return dataset_ops.unbatch(keyed)


class TFRecordReader(ReaderBase):
    """Drop-in replacement for `tf.compat.v1.TFRecordReader`.

    Differences: reading a compat_input producer yields tf.data records with the legacy
    `file:byte offset` keys.
    """

    _legacy_class = tf1.TFRecordReader
    _default_name = "TFRecordReader"
    _notes = True
    _key_kind = "offset"
    _counts_ends = True  # The last block's log counts the file finished (tfrecords.py).

    def __init__(self, name=None, options=None):
        self._options = options
        self._compression = tf1.io.TFRecordOptions.get_compression_type_string(options)
        super().__init__(name=name)

    def _legacy_kwargs(self):
        return {"name": self._name, "options": self._options}

    def check_at(self, key: str):
        """The error reading the record at `key` (`file:offset`) raises now, or None."""
        path, _, offset = key.rpartition(":")
        return tfrecords.error_at(path, int(offset), self._compression)

    def _check_file(self, path, head):
        if self._compression:
            return
        if head == b"\x1f\x8b":
            raise tf.errors.DataLossError(
                None,
                None,
                f"TFRecordReader: {path} is GZIP-compressed but the reader has no options: "
                "pass options=tf.io.TFRecordOptions(compression_type='GZIP').",
            )

    def _config(self):
        return (self._compression,)

    def _records(self, work, bump, note=None):
        return tfrecords.keyed_records(work, self._compression, BLOCK, record_key, bump, note)


class WholeFileReader(ReaderBase):
    """Drop-in replacement for `tf.compat.v1.WholeFileReader`: one record per file."""

    _legacy_class = tf1.WholeFileReader
    _default_name = "WholeFileReader"
    _one_record = True
    supports_serialize = True

    def _record(self, work):
        return work, tf.io.read_file(work)


class IdentityReader(ReaderBase):
    """Drop-in replacement for `tf.compat.v1.IdentityReader`: key = value = the work item."""

    _legacy_class = tf1.IdentityReader
    _default_name = "IdentityReader"
    _reads_files = False
    _one_record = True
    supports_serialize = True

    def _record(self, work):
        return work, work
