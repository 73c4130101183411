"""FixedLengthRecordReader: fixed-size records at fixed strides (CIFAR-10's binary files)."""

import logging

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing
from compat_input._src.inputs import readers

tf1 = tf.compat.v1
logger = logging.getLogger("compat_input")


class FixedLengthRecordReader(readers.ReaderBase):
    """Drop-in replacement for `tf.compat.v1.FixedLengthRecordReader`.

    Differences: none observable; a partial record at the end of a file is dropped, as legacy.
    """

    _legacy_class = tf1.FixedLengthRecordReader
    _default_name = "FixedLengthRecordReader"
    _key_kind = "index"
    _fixed_length = (1,)  # (key, value): every value is record_bytes long.

    def __init__(
        self,
        record_bytes,
        header_bytes=None,
        footer_bytes=None,
        hop_bytes=None,
        name=None,
        encoding=None,
    ):
        if record_bytes is None or record_bytes <= 0:
            raise ValueError(
                f"record_bytes must be a positive number of bytes, got {record_bytes!r}"
            )
        self._record_bytes = int(record_bytes)
        self._header = int(header_bytes or 0)
        self._footer = int(footer_bytes or 0)
        self._hop = int(hop_bytes or 0)
        self._encoding = encoding or ""
        # Set by the build-time check when every file holds whole records only: then the
        # records can be streamed instead of reading each file whole.
        self._whole_records = None
        super().__init__(name=name)

    def _legacy_kwargs(self):
        return {
            "record_bytes": self._record_bytes,
            "header_bytes": self._header or None,
            "footer_bytes": self._footer or None,
            "hop_bytes": self._hop or None,
            "name": self._name,
            "encoding": self._encoding or None,
        }

    def _check_file(self, path, head):
        del head
        if self._encoding:
            return
        body = tf.io.gfile.stat(path).length - self._header - self._footer
        stride = self._hop if self._hop > 0 else self._record_bytes
        tail = (body - self._record_bytes) % stride if body >= self._record_bytes else body
        self._whole_records = (self._whole_records is not False) and not tail
        if tail:
            # Legacy drops a partial record silently; the drop is kept, but said.
            logger.warning(
                "FixedLengthRecordReader: %s ends with %d bytes that do not make a whole "
                "%d-byte record; they are dropped.",
                path,
                tail,
                self._record_bytes,
            )

    def _config(self):
        shape = (self._record_bytes, self._header, self._footer, self._hop)
        return (*shape, self._encoding, self._whole_records)

    def _records(self, work, bump, note=None):
        if self._whole_records and not self._hop:
            return self._streamed(work, bump)
        content = tf.io.read_file(work)
        if self._encoding:
            content = tf.io.decode_compressed(content, compression_type=self._encoding)
        body = tf.cast(tf.strings.length(content), tf.int64) - self._header - self._footer
        stride = self._hop if self._hop > 0 else self._record_bytes
        # Records start every `stride` bytes while a whole record fits before the footer.
        count = tf.maximum(tf.constant(0, tf.int64), (body - self._record_bytes) // stride + 1)
        count = tf.where(body >= self._record_bytes, count, tf.constant(0, tf.int64))
        starts = self._header + tf.range(count, dtype=tf.int64) * stride
        values = tf.strings.substr(
            content, starts, tf.fill(tf.shape(starts), tf.constant(self._record_bytes, tf.int64))
        )
        keys = readers.record_key(work, tf.range(count, dtype=tf.int64))
        with tf.control_dependencies([bump(keys)]):
            keys = tf.identity(keys)
        return tf.data.Dataset.from_tensor_slices((keys, values))

    def _streamed(self, work, bump):
        records = dataset_ops.one_file(
            graph_ops.FixedLengthRecordDatasetV2,
            work,
            header_bytes=tf.constant(self._header or 0, tf.int64),
            record_bytes=tf.constant(self._record_bytes, tf.int64),
            footer_bytes=tf.constant(self._footer or 0, tf.int64),
        ).batch(readers.BLOCK)

        def block(index, values):
            count = tf.size(values, out_type=tf.int64)
            keys = readers.record_key(work, index * readers.BLOCK + tf.range(count))
            with tf.control_dependencies([bump(keys)]):
                return tf.identity(keys), tf.identity(values)

        # Traced as ours: tf.data's map gave it a Grappler pass at each first read (5 ms).
        numbered = dataset_ops.enumerate_(records)
        blocks = tracing.shared_map(numbered, None, dataset_ops.components(block))
        return dataset_ops.unbatch(blocks)
