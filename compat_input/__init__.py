"""compat_input: the TF1 queue-input API (`tf.train.batch`, readers, producers, ...) on tf.data.

Legacy graph-mode input code runs unchanged: producers, readers and batchers build one
tf.data pipeline, started wherever legacy code started its queue runners.
"""

import importlib

# Each public name and the module of compat_input/_src that defines it. Imported on first
# use (PEP 562): `import compat_input` does not load TensorFlow, so the `compat-input`
# command answers `--help` and argument errors at once.
_EXPORTS = {
    "CaptureError": "core.errors",
    "CompatInputError": "core.errors",
    "Coordinator": "runtime.runners",
    "FIFOQueue": "batchers.queues",
    "FixedLengthRecordReader": "inputs.fixed_length_records",
    "Held": "runtime.iteration",
    "IdentityReader": "inputs.readers",
    "InputQueue": "inputs.producers",
    "LooperThread": "runtime.runners",
    "NextQueuedSequenceBatch": "batchers.state_saving",
    "PaddingFIFOQueue": "batchers.queues",
    "PriorityQueue": "batchers.queues",
    "QueueRunner": "runtime.runners",
    "RandomShuffleQueue": "batchers.queues",
    "ReaderBase": "inputs.readers",
    "Saver": "runtime.restoring",
    "Supervisor": "runtime.supervisor",
    "TFRecordReader": "inputs.readers",
    "TextLineReader": "inputs.readers",
    "WholeFileReader": "inputs.readers",
    "add_queue_runner": "runtime.runners",
    "as_dataset": "runtime.bridges",
    "batch": "batchers.batching",
    "batch_sequences_with_states": "batchers.state_saving",
    "bucket": "batchers.buckets",
    "bucket_by_sequence_length": "batchers.buckets",
    "batch_join": "batchers.batching",
    "configure": "core.options",
    "first_skipped_record": "bad_records.skipped",
    "from_dataset": "runtime.bridges",
    "hold": "runtime.iteration",
    "input_producer": "inputs.producers",
    "install": "commands.install",
    "installed": "core.patching",
    "iterate": "runtime.iteration",
    "limit_epochs": "inputs.producers",
    "match_filenames_once": "inputs.input_files",
    "maybe_batch": "batchers.batching",
    "maybe_batch_join": "batchers.batching",
    "maybe_shuffle_batch": "batchers.batching",
    "maybe_shuffle_batch_join": "batchers.batching",
    "range_input_producer": "inputs.producers",
    "rejection_sample": "batchers.sampling",
    "reset": "runtime.iteration",
    "shuffle_batch": "batchers.batching",
    "shuffle_batch_join": "batchers.batching",
    "skipped_files": "bad_records.skipped",
    "skipped_records": "bad_records.skipped",
    "slice_input_producer": "inputs.producers",
    "start_pipelines": "runtime.runners",
    "start_queue_runners": "runtime.runners",
    "stratified_sample": "batchers.sampling",
    "string_input_producer": "inputs.producers",
    "uninstall": "commands.install",
}

__all__ = [
    "CaptureError",
    "CompatInputError",
    "Coordinator",
    "FIFOQueue",
    "FixedLengthRecordReader",
    "Held",
    "IdentityReader",
    "InputQueue",
    "LooperThread",
    "NextQueuedSequenceBatch",
    "PaddingFIFOQueue",
    "PriorityQueue",
    "QueueRunner",
    "RandomShuffleQueue",
    "ReaderBase",
    "Saver",
    "Supervisor",
    "TFRecordReader",
    "TextLineReader",
    "WholeFileReader",
    "add_queue_runner",
    "as_dataset",
    "batch",
    "batch_join",
    "batch_sequences_with_states",
    "bucket",
    "bucket_by_sequence_length",
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
    "rejection_sample",
    "reset",
    "shuffle_batch",
    "shuffle_batch_join",
    "skipped_files",
    "skipped_records",
    "slice_input_producer",
    "start_pipelines",
    "start_queue_runners",
    "stratified_sample",
    "string_input_producer",
    "uninstall",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compat_input' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"compat_input._src.{module}"), name)
    globals()[name] = value  # Found directly from now on.
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
