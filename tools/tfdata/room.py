"""What every room of --to-tfdata shares: the pipeline it fills, and its interface.

A room is one pattern of TF1 input code, in a module of its own. It has two methods:

    recognize(ctx, block, index, pipeline) -> (next index, names computed per example)
        reads the program from `block[index]` into `pipeline`; returns None where that
        statement is not its pattern's, and raises syntax.NotThisPattern(reason) where it
        is but the program differs (the pipeline then stays on compat_input, and the
        report gives the reason);
    rewrite(pipeline, n) -> [lines of code]
        its part of the tf.data code, for the n-th pipeline of the file.

A pipeline starts in a source room (a file queue read by reader_chain.py,
reading_function.py or joins.py; preloaded_slices.py) and ends in an end room
(batching.py, hand_built_queue.py), whose `recognize(ctx, block, index, pipeline,
dependent)` also takes the names computed per example and returns the index after the
statements it consumed. index_producer.py stands alone: one expression.

`ctx` is the converter (tools/tfdata/__init__.py): the metadata (`syntax.qualified`), the
module's functions, whether the program starts its own queue runners.
"""

import dataclasses

import libcst as cst

from .. import rules

CONVERTED = "CI014"
KEPT = "CI015"
# Where a program that sliced preloaded tensors runs its iterators' initializers.
INITIALIZERS = "to_tfdata_initializers"
# The collection every session maker runs in its local init op (a Supervisor's
# `local_init_op`, a Scaffold's, `tf.compat.v1.tables_initializer()`), after the variables'
# initializers: an initializable iterator's initializer there needs nobody to run it.
SESSION_INITIALIZERS = "table_initializer"


@dataclasses.dataclass
class Converted:
    line: int
    flag: rules.Flag
    last: int = 0  # the last line of the converted statements (0: `line` alone)


@dataclasses.dataclass
class Pipeline:
    """One recognized pipeline, as the pieces the tf.data code is written from."""

    root: str  # the module's name for TensorFlow
    source: str  # string_input_producer or slice_input_producer
    made: dict  # the producer's arguments
    queue: str = ""  # the filename queue's name (files)
    params: str = ""  # the example function's parameters
    reader: str = ""  # TextLineReader / TFRecordReader (files)
    reader_args: dict = dataclasses.field(default_factory=dict)
    readers: str = ""  # several readers (a join): how many, as code
    example: list = dataclasses.field(default_factory=list)  # moved into the function
    kept: list = dataclasses.field(default_factory=list)  # independent: stay in place
    returned: str = ""
    batcher: str = ""
    args: dict = dataclasses.field(default_factory=dict)
    target: cst.BaseExpression = None
    reads_in: str = ""  # the function of the module that read, if one did
    reads_by: str = ""  # `obj.method` of a reader class that read (reading_methods.py)
    block: str = ""  # read_up_to's num_records, as code: records read in blocks
    batch_comments: tuple = ()  # the batcher's own comments, kept above its batch
    # Where a slice pipeline's initializer goes: INITIALIZERS, run where the program starts
    # its queue runners, or (SESSION_INITIALIZERS) where a Supervisor, a MonitoredSession's
    # Scaffold or `tf.tables_initializer()` runs it, for a program that starts none itself.
    initializers: str = INITIALIZERS
