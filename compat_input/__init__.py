"""compat_input: the TF1 queue-input API (`tf.train.batch`, readers, producers, ...) on tf.data.

Legacy graph-mode input code runs unchanged: producers, readers and batchers build one
tf.data pipeline, started wherever legacy code started its queue runners.
"""

from compat_input._src.batching import batch
from compat_input._src.batching import batch_join
from compat_input._src.batching import maybe_batch
from compat_input._src.batching import maybe_batch_join
from compat_input._src.batching import maybe_shuffle_batch
from compat_input._src.batching import maybe_shuffle_batch_join
from compat_input._src.batching import shuffle_batch
from compat_input._src.batching import shuffle_batch_join
from compat_input._src.bridges import as_dataset
from compat_input._src.bridges import from_dataset
from compat_input._src.errors import CaptureError
from compat_input._src.errors import CompatInputError
from compat_input._src.fixed_length_records import FixedLengthRecordReader
from compat_input._src.input_files import match_filenames_once
from compat_input._src.install import install
from compat_input._src.install import installed
from compat_input._src.install import uninstall
from compat_input._src.iteration import Held
from compat_input._src.iteration import first_skipped_record
from compat_input._src.iteration import hold
from compat_input._src.iteration import iterate
from compat_input._src.iteration import reset
from compat_input._src.iteration import skipped_files
from compat_input._src.iteration import skipped_records
from compat_input._src.options import configure
from compat_input._src.producers import InputQueue
from compat_input._src.producers import input_producer
from compat_input._src.producers import limit_epochs
from compat_input._src.producers import range_input_producer
from compat_input._src.producers import slice_input_producer
from compat_input._src.producers import string_input_producer
from compat_input._src.readers import IdentityReader
from compat_input._src.readers import ReaderBase
from compat_input._src.readers import TextLineReader
from compat_input._src.readers import TFRecordReader
from compat_input._src.readers import WholeFileReader
from compat_input._src.runners import Coordinator
from compat_input._src.runners import LooperThread
from compat_input._src.runners import QueueRunner
from compat_input._src.runners import add_queue_runner
from compat_input._src.runners import start_pipelines
from compat_input._src.runners import start_queue_runners
from compat_input._src.supervisor import Supervisor

__all__ = [
    "CaptureError",
    "CompatInputError",
    "Coordinator",
    "FixedLengthRecordReader",
    "Held",
    "IdentityReader",
    "InputQueue",
    "LooperThread",
    "QueueRunner",
    "ReaderBase",
    "Supervisor",
    "TFRecordReader",
    "TextLineReader",
    "WholeFileReader",
    "add_queue_runner",
    "as_dataset",
    "batch",
    "batch_join",
    "configure",
    "first_skipped_record",
    "from_dataset",
    "hold",
    "input_producer",
    "install",
    "installed",
    "iterate",
    "limit_epochs",
    "match_filenames_once",
    "maybe_batch",
    "maybe_batch_join",
    "maybe_shuffle_batch",
    "maybe_shuffle_batch_join",
    "range_input_producer",
    "reset",
    "shuffle_batch",
    "shuffle_batch_join",
    "skipped_files",
    "skipped_records",
    "slice_input_producer",
    "start_pipelines",
    "start_queue_runners",
    "string_input_producer",
    "uninstall",
]
