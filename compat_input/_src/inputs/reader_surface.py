"""A reader's counters and state, the legacy surface besides `read`.

Over a producer of ours the reader's log counts records and finished work items
(bad_records/reader_logs.py); over a hand-built queue TensorFlow's own reader does the reading
(readers.py), so it also answers for its counters and state, as a legacy program expects.
"""

import tensorflow as tf

from compat_input._src.bad_records import reader_logs


class CountersAndState:
    """`num_records_produced`, `num_work_units_completed`, `reset`, `serialize_state`,
    `restore_state`, for a reader with `_legacy` (its TensorFlow reader, once made),
    `_legacy_reader()`, `_sources` (what it read of ours) and `recent` (its log)."""

    def _answer(self, method: str, ours, *args, name=None):
        if self._legacy is not None and not self._sources:
            return getattr(self._legacy, method)(*args, name=name)
        return ours()

    def _unsupported(self, what: str):
        raise tf.errors.UnimplementedError(
            None, None, f"{type(self).__name__} does not support {what} its state."
        )

    def _count(self, method: str, which: int, name=None):
        if self._sources:
            return self.recent.count(which)
        # Over a hand-built queue, or asked before the reader read anything (TensorFlow's
        # reader tests build counters first): it may yet read a producer of ours, counted
        # in its log, or a hand-built queue, counted by the legacy reader. Each count stays
        # zero until its kind is read; the sum is the one that counts.
        legacy = getattr(self._legacy_reader(), method)()
        return tf.add(legacy, self.recent.count(which, or_zero=True), name=name)

    def num_records_produced(self, name=None):
        return self._count("num_records_produced", reader_logs.RECORDS, name)

    def num_work_units_completed(self, name=None):
        return self._count("num_work_units_completed", reader_logs.FINISHED, name)

    def reset(self, name=None):
        return self._answer("reset", lambda: tf.no_op(name=name), name=name)

    def serialize_state(self, name=None):
        return self._answer("serialize_state", lambda: self._unsupported("serializing"), name=name)

    def restore_state(self, state, name=None):
        unsupported = lambda: self._unsupported("restoring")  # noqa: E731
        return self._answer("restore_state", unsupported, state, name=name)
