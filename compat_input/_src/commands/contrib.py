"""tf.contrib where TF1 programs reach it: one table of its one-to-one homes, two uses.

TensorFlow 2 has no tf.contrib, and a TF1 program that touches it (the CIFAR-10 trainer's
`tf.contrib.framework.get_or_create_global_step`, the PTB model's `tf.contrib.rnn`, slim
scripts' `tf.contrib.slim`) stops there before its input is built. `HOMES` names, for each
tf.contrib name with a one-to-one home, where the same function lives now. `compat-input
migrate` rewrites calls with it (tools/rules.py); `install()` serves it at run time: the
`contrib` attribute of `tf.compat.v1` and the `tensorflow.contrib.*` modules are stand-ins
that look each name up in the table when the program asks for it. A name without a home
raises AttributeError naming it and what to do.
"""

import importlib
import sys
import types
from typing import Any

from compat_input._src.commands import contrib_helpers

_RNN_CELLS = """BasicLSTMCell BasicRNNCell DeviceWrapper DropoutWrapper GRUCell LSTMCell
    LSTMStateTuple MultiRNNCell ResidualWrapper RNNCell"""
_GLOBAL_STEP = "get_or_create_global_step get_global_step create_global_step assert_global_step"
# tf_slim carries contrib.layers' and contrib.framework's code: the same values.
_IN_TF_SLIM = {
    "layers": """avg_pool2d avg_pool3d batch_norm bias_add conv1d conv2d conv2d_in_plane
        conv2d_transpose conv3d conv3d_transpose convolution convolution1d convolution2d
        convolution2d_in_plane convolution2d_transpose convolution3d convolution3d_transpose
        dense_to_sparse dropout elu flatten fully_connected gdn group_norm images_to_sequence
        instance_norm layer_norm legacy_fully_connected legacy_linear legacy_relu linear
        max_pool2d max_pool3d maxout one_hot_encoding pool relu relu6 repeat separable_conv2d
        separable_convolution2d sequence_to_images softmax spatial_softmax stack unit_norm
        xavier_initializer xavier_initializer_conv2d variance_scaling_initializer
        l1_regularizer l2_regularizer l1_l2_regularizer sum_regularizer apply_regularization
        optimize_loss OPTIMIZER_CLS_NAMES OPTIMIZER_SUMMARIES adaptive_clipping_fn
        summarize_activation summarize_activations summarize_collection summarize_tensor
        summarize_tensors scale_gradient recompute_grad""",
    "framework": """arg_scope add_arg_scope arg_scoped_arguments has_arg_scope current_arg_scope
        add_model_variable assert_or_get_global_step assign_from_checkpoint
        assign_from_checkpoint_fn assign_from_values assign_from_values_fn filter_variables
        get_local_variables get_model_variables get_trainable_variables get_unique_variable
        get_variable_full_name get_variables get_variables_by_name get_variables_by_suffix
        get_variables_to_restore global_variable local_variable model_variable variable
        VariableDeviceChooser""",
}

# tf.contrib.lookup re-exported TensorFlow's own lookup_ops, which TensorFlow 2 keeps but
# exports only in part (tf.lookup has no index_table_from_tensor): contrib name -> its name.
LOOKUP = {
    **{
        n: n
        for n in """index_table_from_tensor index_table_from_file index_to_string_table_from_tensor
        index_to_string_table_from_file HashTable MutableHashTable IdTableWithHashBuckets
        KeyValueTensorInitializer TextFileInitializer TextFileIndex""".split()
    },
    "MutableDenseHashTable": "DenseHashTable",
}

# contrib.training's batchers that compat_input serves (same names at its top level).
CONTRIB_TRAINING = (
    "NextQueuedSequenceBatch",
    "batch_sequences_with_states",
    "bucket",
    "bucket_by_sequence_length",
    "rejection_sample",
    "stratified_sample",
)
# contrib.linalg's linear operators, in tf.linalg since TensorFlow 1.5 under these names;
# TensorFlow 1.4's LinearOperatorTriL is LinearOperatorLowerTriangular there (same arguments;
# the transformer of Kyubyong/transformer builds its causal mask with it). Its
# LinearOperatorUDVHUpdate became LinearOperatorLowRankUpdate with other keywords: no home.
_LINEAR_OPERATORS = {
    **{
        n: n
        for n in """LinearOperator LinearOperatorBlockDiag LinearOperatorCirculant
        LinearOperatorCirculant2D LinearOperatorCirculant3D LinearOperatorComposition
        LinearOperatorDiag LinearOperatorFullMatrix LinearOperatorIdentity
        LinearOperatorKronecker LinearOperatorLowRankUpdate LinearOperatorLowerTriangular
        LinearOperatorScaledIdentity""".split()
    },
    "LinearOperatorTriL": "LinearOperatorLowerTriangular",
}
# tf.contrib name -> its home ("module:attribute.path", or "module" for a whole module).
HOMES: dict = {
    **{f"linalg.{n}": f"tensorflow:compat.v1.linalg.{h}" for n, h in _LINEAR_OPERATORS.items()},
    **{f"rnn.{n}": f"tensorflow:compat.v1.nn.rnn_cell.{n}" for n in _RNN_CELLS.split()},
    **{
        f"rnn.{n}": f"tensorflow:compat.v1.nn.{n}"
        for n in ("static_rnn", "static_bidirectional_rnn", "static_state_saving_rnn")
    },
    **{f"framework.{n}": f"tensorflow:compat.v1.train.{n}" for n in _GLOBAL_STEP.split()},
    **{
        f"{module}.{n}": f"tf_slim:{n}"
        for module, names in _IN_TF_SLIM.items()
        for n in names.split()
    },
    **{
        f"lookup.{n}": f"compat_input._src.core.tf_internals:lookup_ops.{home}"
        for n, home in LOOKUP.items()
    },
    # contrib.training's queue batchers, on tf.data (batchers/buckets.py, sampling.py).
    **{f"training.{n}": f"compat_input:{n}" for n in CONTRIB_TRAINING},
    # Functions with no home but tf.contrib's own code, which the codemod copies in.
    **{
        name.removeprefix("tensorflow.contrib."): f"{contrib_helpers.__name__}:{f.__name__}"
        for name, f in contrib_helpers.HELPERS.items()
    },
}
# Whole modules that live on: every name under them is the same name there.
MODULES: dict = {
    "slim": "tf_slim",
    # tf_slim carries contrib.metrics' code (streaming metrics, aggregate_metric_map).
    "metrics": "tf_slim.metrics",
    # tf.compat.v1.profiler, with contrib's model_analyzer and tfprof_logger names.
    "tfprof": "compat_input._src.commands.contrib_tfprof:",
    "data": "tensorflow:data.experimental",
    # The Keras API TensorFlow 1.4-1.x shipped as tf.contrib.keras (adversarial_text's
    # `K = tf.contrib.keras`): TF1's Keras, Keras 2 (tf_keras) under `compat-input run`.
    "keras": "tensorflow:compat.v1.keras",
    # contrib.layers' modules, which its package exposed beside their names
    # (`tf.contrib.layers.summaries.summarize_activation`, im2txt's Inception encoder).
    **{
        f"layers.{m}": f"tf_slim.layers.{m}"
        for m in "initializers layers normalization optimizers regularizers summaries utils".split()
    },
}
PACKAGES = sorted({name.split(".")[0] for name in [*HOMES, *MODULES]})

# contrib's own module paths, which research code imports (`from
# tensorflow.contrib.layers.python.layers import utils`, `from
# tensorflow.contrib.slim.python.slim.data import parallel_reader`): tf_slim carries the code
# of these packages, module for module under the same names.
_INTERNAL_PACKAGES = {
    "slim.python.slim": "tf_slim",
    "layers.python.layers": "tf_slim.layers",
    "framework.python.ops": "tf_slim.ops",
    "metrics.python.ops": "tf_slim.metrics",
    "losses.python.losses": "tf_slim.losses",
    # `from tensorflow.contrib.slim.nets import resnet_v1` (fine-tuning tutorials).
    "slim.nets": "tf_slim.nets",
    "training.python.training": "tf_slim.training",
}
# tf_slim 1.1.0's modules (the version requirements.txt pins), relative to the package.
_TF_SLIM_MODULES = """data data.data_decoder data.data_provider data.dataset
    data.dataset_data_provider data.parallel_reader data.prefetch_queue data.tfexample_decoder
    evaluation layers layers.initializers layers.layers layers.normalization layers.optimizers
    layers.regularizers layers.summaries layers.utils learning losses losses.loss_ops
    losses.metric_learning metrics metrics.classification metrics.histogram_ops
    metrics.metric_ops model_analyzer nets nets.alexnet nets.inception nets.inception_v1
    nets.inception_v2 nets.inception_v3 nets.overfeat nets.resnet_utils nets.resnet_v1
    nets.resnet_v2 nets.vgg ops ops.arg_scope ops.framework_ops ops.variables queues
    summaries training training.evaluation training.training""".split()


def _internal_modules() -> dict:
    """Every contrib module path of `_INTERNAL_PACKAGES` -> its tf_slim module (None for the
    packages in between, `tensorflow.contrib.layers.python`)."""
    found: dict = {}
    for path, home in _INTERNAL_PACKAGES.items():
        parts = path.split(".")
        for i in range(2, len(parts)):
            found.setdefault(".".join(parts[:i]), None)
        found[path] = home
        prefix = home.removeprefix("tf_slim").lstrip(".")
        for module in _TF_SLIM_MODULES:
            if prefix and module.startswith(prefix + "."):
                found[f"{path}.{module[len(prefix) + 1 :]}"] = f"tf_slim.{module}"
            elif not prefix:
                found[f"{path}.{module}"] = f"tf_slim.{module}"
    return found


INTERNAL_MODULES = _internal_modules()
# The packages of `_INTERNAL_PACKAGES` inside a whole module's home, loaded with it:
# `import tensorflow.contrib.slim.nets as nets` walks `tensorflow.contrib.slim` (tf_slim)
# to its `nets`, an attribute of tf_slim only once imported (3 ms).
_SUBMODULES = {
    key: tuple(
        home
        for path, home in _INTERNAL_PACKAGES.items()
        if path.startswith(f"{key}.") and home.startswith(f"{MODULES[key]}.")
    )
    for key in MODULES
}
# contrib's own modules that re-exported TensorFlow's ops under their names, now at their
# public home (SSD-Tensorflow's `from tensorflow.contrib.metrics.python.ops import set_ops`
# for `set_ops.set_intersection`).
INTERNAL_MODULES["metrics.python.ops.set_ops"] = "tensorflow.compat.v1.sets"
# ... and its audio kernels, of which TensorFlow 2 exports two (contrib_audio.py).
INTERNAL_MODULES["framework.python.ops.audio_ops"] = "compat_input._src.commands.contrib_audio"


# Packages whose contrib `__init__` star-imported its modules' names, where tf_slim's
# package of the same code does not (`from tensorflow.contrib.framework.python.ops import
# add_arg_scope`, SSD-Tensorflow's layers): the modules that give them, in contrib's order.
STAR_IMPORTED = {
    "tf_slim.ops": ("tf_slim.ops.arg_scope", "tf_slim.ops.framework_ops", "tf_slim.ops.variables"),
}


class InternalModule(types.ModuleType):
    """One of contrib's own module paths: its tf_slim module's names, loaded on first use."""

    def __init__(self, name: str, home):
        super().__init__(name, f"A stand-in for {name}: {home or 'a package'} (compat_input).")
        self.__path__: list = []  # `import tensorflow.contrib.layers.python.layers` finds it.
        self._home = home

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_home":
            raise AttributeError(name)
        child = sys.modules.get(f"{self.__name__}.{name}")
        if isinstance(child, InternalModule):
            return child
        if self._home is not None:
            try:
                return getattr(importlib.import_module(self._home), name)
            except AttributeError:
                pass
            try:
                return importlib.import_module(f"{self._home}.{name}")
            except ImportError:
                pass
            for module in STAR_IMPORTED.get(self._home, ()):
                found = importlib.import_module(module)
                if name in getattr(found, "__all__", ()) or (
                    not hasattr(found, "__all__") and not name.startswith("_")
                ):
                    if hasattr(found, name):
                        return getattr(found, name)
        raise AttributeError(
            f"{self.__name__}.{name} is gone with tf.contrib, and tf_slim, which carries "
            f"{self.__name__}'s code, has no such name."
        )


def _load(home: str) -> Any:
    module, _, path = home.partition(":")
    value = importlib.import_module(module)
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


class ContribModule(types.ModuleType):
    """`tensorflow.contrib` or one of its packages: names resolved from the table."""

    def __init__(self, name: str, served: bool = True):
        super().__init__(name, f"A stand-in for {name} (compat_input.install()).")
        self.__path__: list = []  # A package: `import tensorflow.contrib.rnn` finds it.
        # False under `compat-input run --legacy`: contrib.training's batchers, which
        # compat_input serves on tf.data only, are not given to a program on legacy queues.
        self.served = served

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        within = self.__name__[len("tensorflow.contrib") :].lstrip(".")
        key = f"{within}.{name}".lstrip(".")
        if key in HOMES:
            if not self.served and HOMES[key].startswith("compat_input:"):
                raise AttributeError(
                    f"tf.contrib.{key} exists in TensorFlow 2 only as compat_input's, on "
                    "tf.data (contrib's queue version was removed with tf.contrib): run the "
                    "program with `compat-input run`, not `--legacy`."
                )
            return _loaded(key, HOMES[key])
        if key in MODULES:
            for submodule in _SUBMODULES.get(key, ()):
                importlib.import_module(submodule)
            return _loaded(key, MODULES[key])
        if within in MODULES:  # `from tensorflow.contrib.slim import arg_scope`
            home = _loaded(within, MODULES[within])
            if hasattr(home, name):
                return getattr(home, name)
        if not within and key in PACKAGES:
            return sys.modules.get(f"tensorflow.contrib.{key}") or ContribModule(
                f"tensorflow.contrib.{key}", self.served
            )
        raise AttributeError(
            f"tf.contrib.{key} is gone in TensorFlow 2 (tf.contrib was removed), and it has "
            "no one-to-one home that compat_input can serve. `compat-input migrate FILE` "
            "reports what to use instead (migration_guide.md, 'Known limits')."
        )


def _loaded(key: str, home: str) -> Any:
    try:
        return _load(home)
    except (ImportError, AttributeError) as error:
        # tf_slim not installed; tf.compat.v1's RNN cells and layers without Keras 2.
        raise AttributeError(
            f"tf.contrib.{key} is served as {home.replace(':', '.').rstrip('.')}, which "
            f"this installation cannot give: {error} (tf_slim: pip install tf-slim; Keras 2: "
            "pip install 'compat-input[keras2]')."
        ) from error
