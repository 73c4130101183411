"""The names compat_input serves, and where TensorFlow holds them: the rows of install()'s
table and the codemod's renames (tools/rules.py). Plain data, importable without
TensorFlow (the `compat-input` command answers `--help` without loading it).
"""

# (module path under tf.compat.v1, attribute names) that compat_input serves; the codemod
# (tools/rules.py) renames the same names.
SERVED = (
    (
        "train",
        (
            "batch",
            "batch_join",
            "maybe_batch",
            "maybe_batch_join",
            "shuffle_batch",
            "shuffle_batch_join",
            "maybe_shuffle_batch",
            "maybe_shuffle_batch_join",
            "input_producer",
            "string_input_producer",
            "range_input_producer",
            "slice_input_producer",
            "limit_epochs",
            "match_filenames_once",
            "start_queue_runners",
            "add_queue_runner",
            "QueueRunner",
            "Supervisor",
        ),
    ),
    ("train.queue_runner", ("QueueRunner", "add_queue_runner", "start_queue_runners")),
    # tf_upgrade_v2 moves tf.train.match_filenames_once here.
    ("io", ("match_filenames_once",)),
    (
        "",
        (
            "TextLineReader",
            "TFRecordReader",
            "FixedLengthRecordReader",
            "WholeFileReader",
            "IdentityReader",
            "FIFOQueue",
            "RandomShuffleQueue",
            "PaddingFIFOQueue",
            "PriorityQueue",
        ),
    ),
    # The queues a program builds (batchers/queues.py), as tf_upgrade_v2 spells them too.
    ("queue", ("FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue")),
)


_RUNNER_NAMES = ("QueueRunner", "add_queue_runner", "start_queue_runners")
_TRAIN_NAMES = dict(SERVED)["train"]
_INPUT_NAMES = tuple(n for n in _TRAIN_NAMES if n not in _RUNNER_NAMES + ("Supervisor",))
_QUEUE_NAMES = dict(SERVED)["queue"]
_READER_NAMES = tuple(n for n in dict(SERVED)[""] if n not in _QUEUE_NAMES)

# Where else TensorFlow defines or re-exports the served names, as paths in its python
# package. Libraries reach the queue API there (tf_slim imports `training.input` as
# `tf_input`, `training.queue_runner`, `training.supervisor`, `ops.io_ops`) and look the
# names up as they call them, so a library imported before install() is served too.
# tests/test_package.py scans every TensorFlow module for a served name left unpatched.
SERVED_IN_MODULES = (
    ("training.input", _INPUT_NAMES),
    ("training.queue_runner_impl", _RUNNER_NAMES),
    ("training.queue_runner", _RUNNER_NAMES),
    ("training.supervisor", ("Supervisor",)),
    ("training.training", _TRAIN_NAMES),
    ("ops.io_ops", _READER_NAMES),
    ("ops.standard_ops", _READER_NAMES + _QUEUE_NAMES),
    # tf_slim's prefetch_queue and parallel_reader build theirs from here.
    ("ops.data_flow_ops", _QUEUE_NAMES),
)
# TensorFlow 2's API modules that hold a served name too (`tf.io.match_filenames_once`).
SERVED_IN_API = (
    ("compat.v2.compat.v1", _READER_NAMES + _QUEUE_NAMES),
    ("compat.v1.io", ("PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue")),
    ("io", ("match_filenames_once",)),
    ("compat.v2.io", ("match_filenames_once",)),
    ("queue", _QUEUE_NAMES),
    ("compat.v2.queue", _QUEUE_NAMES),
)
