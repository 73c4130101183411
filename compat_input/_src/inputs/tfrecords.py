"""TFRecord files read up to their first damage, and opened again at a byte offset.

A damaged record must not take the good records of its block down with it (a batch that
fails loses what it gathered): the records are read up to the damage (`ignore_errors`
ends a TFRecord file at its first error), and once they are all delivered, the file is
opened again where reading stopped. At the end of a whole file that reads nothing; at
damage it raises TensorFlow's own error, as a legacy reader did. No public API opens a
TFRecord file at an offset: `TFRecordDatasetV2` does, and cannot be serialized (TF 2.21),
so it is only ever made inside a dataset function.
"""

from collections.abc import Callable
from typing import Optional

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from compat_input._src.runtime import iterators

tf1 = tf.compat.v1


def records_from(path: tf.Tensor, offset, compression: str) -> tf.data.Dataset:
    """The records of a TFRecord file from a byte offset on (inside a dataset function)."""
    variant = graph_ops.TFRecordDatasetV2(
        filenames=tf.reshape(path, [1]),
        compression_type=compression,
        buffer_size=tf.constant(256 * 1024, tf.int64),
        byte_offsets=tf.reshape(tf.cast(offset, tf.int64), [1]),
    )
    return tf.data.experimental.from_variant(variant, tf.TensorSpec([], tf.string))


def error_at(path: str, offset: int, compression: str) -> Optional[tf.errors.OpError]:
    """The error reading the record at `offset` of `path` raises now, or None."""
    with tf.Graph().as_default():
        record = tf.data.Dataset.from_tensors(tf.constant(path)).flat_map(
            lambda path: records_from(path, offset, compression).take(1)
        )
        element = iterators.one_shot(record).get_next()
        with tf1.Session() as sess:
            try:
                sess.run(element)
            except tf.errors.OutOfRangeError:
                return None
            except tf.errors.OpError as error:
                return error
    return None


def keyed_records(
    work: tf.Tensor, compression: str, block: int, key: Callable, bump, note=None
) -> tf.data.Dataset:
    """`(file:offset key, record)` of the file `work`; `bump(keys, ended=...)` runs a block
    at a time, the file's end counted by the last one; `note(key)` before the file is opened
    again at the end (see ReaderBase._records)."""
    records = dataset_ops.one_file(
        graph_ops.TFRecordDataset, work, compression_type=compression or ""
    )
    blocks = records.ignore_errors().batch(block)
    # Each block marked as no end, then the end: zipped and made, not mapped (a map is a
    # function traced, 5-10 ms of every TFRecord program's build).
    marked = tf.data.Dataset.zip((tf.data.Dataset.from_tensors(False).repeat(), blocks))
    end = tf.data.Dataset.from_tensors((tf.constant(True), tf.zeros([0], tf.string)))
    blocks = marked.concatenate(end)
    note = note or (lambda key, when: tf.no_op())

    def keyed(start, element):
        at_end, records = element
        # Each record takes 8 (length) + 4 (crc) + data + 4 (crc) bytes of the stream.
        sizes = tf.cast(tf.strings.length(records), tf.int64) + 16
        keys = key(work, start + tf.cumsum(sizes, exclusive=True))
        # Logged without a cond (each traces its branches, 10-15 ms of every TFRecord build):
        # the end's block is empty, and logging it counts only the file finished, once the
        # rest of the file was found empty (damage raises first, as legacy's reader did).
        # Counted here, the end needs no filter function of its own after the records.
        with tf.control_dependencies([_rest_read(work, start, at_end, compression, note, key)]):
            logged = bump(keys, ended=at_end)
        with tf.control_dependencies([logged]):
            keys = tf.identity(keys)
        return start + tf.reduce_sum(sizes), (keys, records)

    # Unbatched: a record passes one dataset on its way, where a flat_map of each block's
    # slices and the end's check passed it through three (1-2 us a record), and made five
    # datasets a block (150 us a block of 256).
    return dataset_ops.unbatch(dataset_ops.scan(blocks, tf.constant(0, tf.int64), keyed))


def _rest_read(work, offset, at_end, compression: str, note, key) -> tf.Tensor:
    """At the end (`at_end`), the file opened again at `offset`, where reading stopped, and
    its next record read: nothing at the end of a whole file, TensorFlow's own error at
    damage (after every record before it was delivered). Elsewhere nothing is opened."""
    # The note (kept: the stream may run on after an error) lets an error be named by
    # reading that one record again (bad_records/origins.py), not the whole file.
    with tf.control_dependencies([note(key(work, offset), at_end)]):
        rest = records_from(work, offset, compression).take(tf.cast(at_end, tf.int64))
    # One element always, with no function traced (a reduce's): a record read, or "".
    return (
        rest.concatenate(tf.data.Dataset.from_tensors(tf.constant(""))).take(1).get_single_element()
    )
