"""The codemod's tables: what it renames, and what it reports for a person to look at.

Every rewrite is a row here; the engine (codemod.py) is generic. Names are matched by
qualified name (`tensorflow.train.batch`), so every spelling a program can use resolves to
the same row: `tf.train.batch`, `tf.compat.v1.train.batch` (as tf_upgrade_v2 leaves it),
`import tensorflow.compat.v1 as tf`, `from tensorflow.train import batch`, other aliases.
"""

import dataclasses

from compat_input._src.commands import contrib
from compat_input._src.commands import contrib_helpers
from compat_input._src.commands.served_names import SERVED


def _renames() -> dict:
    table = {}
    for namespace, names in SERVED:
        for root in ("tensorflow", "tensorflow.compat.v1"):
            prefix = ".".join(p for p in (root, namespace) if p)
            for name in names:
                table[f"{prefix}.{name}"] = name
    for root in ("tensorflow", "tensorflow.compat.v1"):
        table.update({f"{root}.contrib.training.{n}": n for n in contrib.CONTRIB_TRAINING})
        # A Saver that restores checkpoints lacking an input position, as legacy's did:
        # install() patches every Saver's restore, a migrated program has no install().
        table[f"{root}.train.Saver"] = "Saver"
    return table


# Qualified legacy name -> name in compat_input.
RENAMES: dict = _renames()
# contrib.training's batchers, served by compat_input under the same names: rewritten, so
# neither tf.contrib's catch-all finding nor the upgrader's "deprecated module" applies.
SERVED_CONTRIB = frozenset(n for n in RENAMES if ".contrib." in n)


# TF1 names that tf_upgrade_v2 leaves as TensorFlow 2's (while reporting them converted to
# tf.compat.v1): TF2's tf.summary.scalar writes nothing in a graph and merge_all() does
# not see it (merge_all() then returns None). Qualified name -> path under the module's
# tensorflow alias.
KEEP_V1_NAMES = {
    f"tensorflow.summary.{name}": f"compat.v1.summary.{name}"
    for name in ("scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge")
}
# TF2's tf.Variable is always a resource variable, whatever disable_v2_behavior() says:
# it ignores `collections=` (a data variable kept out of global_variables() is initialized
# with the rest), and a collection holding it exports its handle, so that after
# import_meta_graph `sess.run(tf.get_collection("lr")[0])` fetches a handle, not the
# learning rate (the PTB language model). tf.compat.v1.Variable is TF1's variable.
KEEP_V1_NAMES["tensorflow.Variable"] = "compat.v1.Variable"
# Names TensorFlow removed in 1.0, before tf_upgrade_v2 existed (it passes them through,
# and they then fail): 2016 tutorials and papers' code still spell them so. Each is the
# same function under its 1.x name, with the same positional arguments.
KEEP_V1_NAMES.update(
    {
        "tensorflow.train.SummaryWriter": "compat.v1.summary.FileWriter",
        "tensorflow.merge_all_summaries": "compat.v1.summary.merge_all",
        "tensorflow.merge_summary": "compat.v1.summary.merge",
        "tensorflow.scalar_summary": "compat.v1.summary.scalar",
        "tensorflow.histogram_summary": "compat.v1.summary.histogram",
        "tensorflow.initialize_all_variables": "compat.v1.global_variables_initializer",
        "tensorflow.initialize_local_variables": "compat.v1.local_variables_initializer",
        "tensorflow.initialize_variables": "compat.v1.variables_initializer",
        "tensorflow.all_variables": "compat.v1.global_variables",
        "tensorflow.mul": "math.multiply",
        "tensorflow.sub": "math.subtract",
        "tensorflow.neg": "math.negative",
        "tensorflow.select": "compat.v1.where",
        "tensorflow.pack": "stack",
        "tensorflow.unpack": "unstack",
        # Modules the upgrader reports removed, which tf.compat.v1 still serves whole.
        "tensorflow.flags": "compat.v1.flags",
        "tensorflow.logging": "compat.v1.logging",
    }
)
# tf.flags' names from python-gflags, which TensorFlow 1.5 replaced with absl's flags: the
# base class of every flag error, `FlagsError` there, is `Error` in absl (DuplicateFlagError,
# IllegalFlagValueError, ... derive from it either way). Qualified name -> absl's name.
ABSL_RENAMES = {
    f"tensorflow.{home}flags.FlagsError": "Error"
    for home in ("", "app.", "compat.v1.", "compat.v1.app.")
}
# tf.contrib's names whose home is on tf.compat.v1 (rnn cells and functions, the global-step
# functions), from the table install() serves at run time (compat_input's contrib.py).
KEEP_V1_NAMES.update(
    {
        f"tensorflow.contrib.{name}": home.partition(":")[2]
        for name, home in contrib.HOMES.items()
        if home.startswith("tensorflow:")
    }
)
# Prefixes kept on tf.compat.v1 the same way: the upgrader leaves tf.layers.*, which
# TensorFlow 2 lacks; tf.compat.v1.layers.* runs with Keras 2 (resolve.py says so).
KEEP_V1_PREFIXES = {
    "tensorflow.layers.": "compat.v1.layers.",
    # Where the upgrader moves tf.contrib.rnn.LSTMStateTuple; TensorFlow 2 has no tf.nn.rnn_cell.
    "tensorflow.nn.rnn_cell.": "compat.v1.nn.rnn_cell.",
    # tf.contrib's modules that live on in TensorFlow (contrib.MODULES).
    **{
        f"tensorflow.contrib.{name}.": home.partition(":")[2] + "."
        for name, home in contrib.MODULES.items()
        if home.startswith("tensorflow:compat.v1.")
    },
    # tfprof is tf.compat.v1.profiler (its model_analyzer: CALL_REWRITES, EXPRESSIONS).
    "tensorflow.contrib.tfprof.tfprof_logger.": "compat.v1.profiler.",
    "tensorflow.contrib.tfprof.": "compat.v1.profiler.",
}
# tf.contrib constants whose home is an expression: qualified name -> the expression
# under the module's tensorflow alias (contrib's option dicts are ProfileOptionBuilder's).
EXPRESSIONS = {
    f"tensorflow.contrib.tfprof.model_analyzer.{name}": (
        f"compat.v1.profiler.ProfileOptionBuilder.{builder}()"
    )
    for name, builder in {
        "TRAINABLE_VARS_PARAMS_STAT_OPTIONS": "trainable_variables_parameter",
        "FLOAT_OPS_OPTIONS": "float_operation",
        "PRINT_ALL_TIMING_MEMORY": "time_and_memory",
    }.items()
}


# tf.contrib modules that live on as packages of their own, with the same API: the codemod
# imports the package, a dependency the migrated program then needs (the report says so).
# tf_slim also carries contrib.layers' layers, initializers, regularizers and optimizers,
# and contrib.framework's arg_scope and variable functions: the same code, so the same
# values (tf_upgrade_v2's Keras stand-ins are not: its xavier_initializer(uniform=False)
# draws with another standard deviation). contrib.framework's global-step functions stay
# on tf.compat.v1.train (KEEP_V1_NAMES). One table with install()'s (contrib.py).
MOVED_MODULES = {
    f"tensorflow.contrib.{name}": home for name, home in contrib.MODULES.items() if ":" not in home
}
MOVED_MODULES.update(
    {
        f"tensorflow.contrib.{name}": home.replace(":", ".")
        for name, home in contrib.HOMES.items()
        if home.startswith("tf_slim:")
    }
)

# contrib's own module paths (`from tensorflow.contrib.layers.python import layers as
# tf_layers`, video prediction) are tf_slim's modules of the same code, as install() serves.
MOVED_MODULES.update(
    {
        f"tensorflow.contrib.{path}": home
        for path, home in contrib.INTERNAL_MODULES.items()
        # compat_input's own stand-ins (contrib's audio ops) are no home for migrated code.
        if home and not home.startswith("compat_input.")
    }
)

# tf.contrib.lookup's functions are TensorFlow's own lookup_ops, which TensorFlow 2 keeps
# but exports only in part (tf.compat.v1.lookup has no index_table_from_tensor): qualified
# name -> (the module the migrated file imports, the name there).
FROM_MODULES = {
    f"tensorflow.contrib.lookup.{name}": ("tensorflow.python.ops.lookup_ops", home)
    for name, home in contrib.LOOKUP.items()
}

# tf.contrib.rnn.LSTMBlockCell(...) -> tf.compat.v1.nn.rnn_cell.LSTMCell(...): the fused
# kernel computes the LSTM that LSTMCell computes (gates i, j, f, o; forget_bias added to
# f; the same `kernel` and `bias` variables under the same `lstm_cell` scope). Positional
# arguments after the first become keywords, renamed where LSTMCell spells them otherwise.
CALL_REWRITES = {
    "tensorflow.contrib.rnn.LSTMBlockCell": (
        "compat.v1.nn.rnn_cell.LSTMCell",
        ("num_units", "forget_bias", "cell_clip", "use_peephole", "dtype", "reuse", "name"),
        {"use_peephole": "use_peepholes"},
    ),
    # tfprof's analysis is the profiler's profile(), with its arguments renamed.
    "tensorflow.contrib.tfprof.model_analyzer.print_model_analysis": (
        "compat.v1.profiler.profile",
        ("graph", "run_meta", "op_log", "tfprof_cmd", "tfprof_options"),
        {"tfprof_cmd": "cmd", "tfprof_options": "options"},
    ),
    # Removed in TF 1.0 (KEEP_V1_NAMES has its siblings), with arguments renamed since.
    "tensorflow.image_summary": (
        "compat.v1.summary.image",
        ("tag", "tensor", "max_images", "collections", "name"),
        {"tag": "name", "max_images": "max_outputs"},
    ),
}


def as_tf1(name: str) -> str:
    """`tensorflow.compat.v1.X` as `tensorflow.X`: under `import tensorflow.compat.v1 as
    tf`, tf.contrib.X and tf.train.X qualify so, and the tables hold the TF1 spelling."""
    return name.replace("tensorflow.compat.v1.", "tensorflow.", 1)


def with_tf1_spellings(names: set) -> set:
    """`names` and their `as_tf1` spellings."""
    return names | {as_tf1(n) for n in names}


def contrib_module(name: str) -> bool:
    """Whether the qualified `name` is tf.contrib or one of its modules with homes."""
    name = as_tf1(name)
    return name == "tensorflow.contrib" or name.removeprefix("tensorflow.contrib.") in (
        contrib.PACKAGES
    )


def moved(name: str):
    """The qualified name `name` in the package its tf.contrib module became, or None.
    The longest path that holds it decides (`slim.python.slim.data` before `slim`)."""
    name = as_tf1(name)
    parts = name.split(".")
    for end in range(len(parts), 2, -1):
        new = MOVED_MODULES.get(".".join(parts[:end]))
        if new:
            return ".".join([new, *parts[end:]])
    return None


def keep_v1(name: str):
    """The path under the tensorflow alias that keeps `name` on TF1's API, or None."""
    if name in KEEP_V1_NAMES:
        return KEEP_V1_NAMES[name]
    for prefix, path in KEEP_V1_PREFIXES.items():
        if name.startswith(prefix):
            return path + name[len(prefix) :]
    return None


@dataclasses.dataclass(frozen=True)
class Flag:
    """A pattern the codemod cannot convert safely: reported, never rewritten."""

    code: str
    severity: str  # "note" (fine as it is), "warning" (check it), "error" (port by hand)
    message: str
    anchor: str  # in migration_guide.md

    def render(self) -> str:
        return f"{self.severity}: {self.message} [{self.code}] (migration_guide.md#{self.anchor})"


MOVED_NOTE = Flag(
    "CI012",
    "note",
    "tf.contrib.slim, and contrib.layers' and contrib.framework's functions, are the tf_slim "
    "package now: the migrated file imports it, so install it beside compat_input (pip "
    "install tf-slim); tf_slim's own queue input (parallel_read, prefetch_queue) is served "
    "from tf.data where compat_input.install() runs",
    "the-codemod",
)
# One note a helper: each names the tf.contrib function and what the file defines for it.
HELPER_NOTES = {
    name: Flag(
        "CI013",
        "note",
        f"tf.{name.removeprefix('tensorflow.')} has no home in TensorFlow 2: the migrated file "
        f"defines {helper.__name__} after its imports (tf.contrib's code, the same values) "
        "and calls it",
        "the-codemod",
    )
    for name, helper in contrib_helpers.HELPERS.items()
}

_QUEUES = ("FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue")

# Qualified name (or prefix ending in '.') -> flag.
FLAGS: dict = {
    **{
        f"{root}.{name}": Flag(
            "CI001",
            "note",
            f"hand-built {name} made compat_input's: served from tf.data where a QueueRunner "
            "fills it (made before or after its first dequeue); fed from Python, it stays "
            "TensorFlow's queue, and works as before",
            "hand-built-queues",
        )
        for name in _QUEUES
        for root in ("tensorflow", "tensorflow.compat.v1", "tensorflow.queue")
    },
    "tensorflow.contrib.training.SequenceQueueingStateSaver": Flag(
        "CI016",
        "error",
        "tf.contrib is gone in TensorFlow 2, and SequenceQueueingStateSaver is a queue its "
        "prefetch_op fills (often from Python, with a batch size fed each run), which tf.data "
        "cannot stand for: build the same batches from the input tensors with "
        "tf.contrib.training.batch_sequences_with_states (compat_input serves it; the same "
        "NextQueuedSequenceBatch)",
        "known-limits",
    ),
    # Calls are rewritten (CALL_REWRITES); the class passed around uncalled is not.
    "tensorflow.contrib.rnn.LSTMBlockCell": Flag(
        "CI004",
        "error",
        "tf.contrib is gone in TensorFlow 2: tf.compat.v1.nn.rnn_cell.LSTMCell(num_units, "
        "forget_bias=..., use_peepholes=...) computes the same LSTM without the fused kernel "
        "(needs Keras 2: compat-input[keras2])",
        "known-limits",
    ),
    # The tf.contrib pieces common in input and training code, each with its fix. Errors:
    # the code keeps the tf.contrib name, which fails when run on TensorFlow 2.
    **{
        prefix: Flag("CI004", "error", f"tf.contrib is gone in TensorFlow 2: {fix}", "known-limits")
        for prefix, fix in {
            "tensorflow.contrib.data.": "use the same function from tf.data.experimental "
            "(or tf.data.Dataset)",
            "tensorflow.contrib.rnn.": "use tf.compat.v1.nn.rnn_cell (needs Keras 2: "
            "compat-input[keras2]) or Keras 3 RNN layers",
            "tensorflow.contrib.layers.": "use tf.compat.v1.layers (needs Keras 2: "
            "compat-input[keras2]), tf.keras.initializers / regularizers, or Keras 3 layers",
            "tensorflow.contrib.framework.": "most of it is in tf.compat.v1.train "
            "(get_or_create_global_step) and tf.compat.v1 (arg_scope moved to tf_slim)",
            "tensorflow.contrib.learn.": "tf.contrib.learn's datasets and Estimators are "
            "gone: read the data with tf.data or tensorflow_datasets",
        }.items()
    },
    "tensorflow.examples.tutorials.mnist.": Flag(
        "CI011",
        "error",
        "the MNIST tutorial helpers (input_data, mnist) are not part of TensorFlow 2: read "
        "MNIST with tf.keras.datasets.mnist.load_data() or tensorflow_datasets ('mnist'), "
        "and keep the tutorial's model code as a file of your own",
        "known-limits",
    ),
    "tensorflow.contrib.": Flag(
        "CI004",
        "error",
        "tf.contrib is gone in TensorFlow 2 and this name has no one-to-one home: port it by hand",
        "known-limits",
    ),
}

PLACEHOLDER_BATCH_SIZE = Flag(
    "CI005",
    "error",
    "batch_size is fed through a placeholder: a tf.data pipeline fixes its batch size when "
    "it starts; use a constant",
    "what-cannot-be-captured",
)

FLAG_DEFAULT = Flag(
    "CI020",
    "error",
    "a flag whose default is of another type (`DEFINE_string('momentum', 0.9)`): absl refuses "
    "it as the file imports its flags (TensorFlow 1.0-1.4's flags kept it, and `compat-input "
    "run` does); define the flag with its default's type (DEFINE_float), or quote the default",
    "the-codemod",
)

# TensorFlow's flag definitions -> the literal default types absl refuses for them.
REFUSED_DEFAULTS = {"DEFINE_string": ("Integer", "Float"), "DEFINE_integer": ("Float",)}

QUEUE_SIZE = Flag(
    "CI006",
    "note",
    "the size of a producer's queue is read: under compat_input, the items left to read, up "
    "to its capacity, as legacy's queue held them (an endless producer is always full)",
    "summaries-and-queue-sizes",
)

BATCHERS = frozenset(n for n in RENAMES.values() if "batch" in n)
# What starts and stops the input, apart from the input itself.
RUNNERS = frozenset(
    {"start_queue_runners", "Coordinator", "QueueRunner", "add_queue_runner", "Supervisor"}
)
# What --to-tfdata leaves TensorFlow's: the runners (they start the pipelines left on
# compat_input too) and the Saver (a program whose input all became tf.data saves no input
# position, and imports nothing of compat_input).
KEPT_WITH_TFDATA = RUNNERS | {"Saver"}
PRODUCERS = frozenset(n for n in RENAMES.values() if n.endswith("_producer"))
# Positional index of batch_size in each batcher (maybe_* take keep_input before it).
BATCH_SIZE_POSITION = {
    name: 2 if name in ("maybe_batch", "maybe_batch_join") else 1 for name in BATCHERS
}
