"""What TensorFlow 1 did that its `tf.compat.v1` in TensorFlow 2 refuses.

`compat-input run` gives TF1 programs TensorFlow 1's behaviour here, on legacy queues too
(`--legacy`), where both ran the same program:

- `tf.compat.v1.logging.flush()` raises NotImplementedError (TensorFlow 2.21's
  tf_logging.py); TensorFlow 1's flushed the handlers of its logger. tensorflow/models
  research programs end their training with it, after their last checkpoint
  (video_prediction's prediction_train.py): on TensorFlow 2 they exited with status 1.
- A shape dimension given as an integral float (`input_channels / groups` in Python 3, 3.0)
  raises TypeError in TensorFlow 2's `Dimension`; TensorFlow 1's took `int(value)` where
  that equals the value ("Ambiguous dimension" otherwise). Course and paper code of
  TensorFlow 1 on Python 3 builds its weights so (lhzhong/TFCode's VGG16 and AlexNet
  layers): on TensorFlow 2 they failed before their first step.
- tf_slim's `batch_norm` (in every slim network: Inception, ResNet) builds TensorFlow's
  `layers.normalization.BatchNormalization`, which TensorFlow 2.21 loads lazily from
  `tf_keras.legacy_tf_layers.normalization`; tf_keras 2.21 keeps that module under
  `tf_keras.src`, and the first `batch_norm` raised ModuleNotFoundError (im2txt's
  Inception encoder, tensorflow/models). Served from where tf_keras keeps it.
- A flag whose default is of another type than the flag
  (`flags.DEFINE_string('momentum', 0.9, ...)`, research/attention_ocr;
  `DEFINE_integer('steps', 1e6, ...)`): TensorFlow 1.0-1.4's flags (argparse) kept such a
  default as it was, and converted only what the command line gave; absl's refuse it, and
  the program failed as it imported its flags. Such a default is kept, as it was then.
"""

import importlib
import importlib.util
import logging
import numbers
import os

import absl.flags


def flush() -> None:
    """`tf.compat.v1.logging.flush` as TensorFlow 1 had it: flushes each handler of
    TensorFlow's logger."""
    for handler in logging.getLogger("tensorflow").handlers:
        handler.flush()


def dimension_init(init):
    """`Dimension.__init__` that takes an integral number of another type, as TensorFlow
    1's did; everything else as TensorFlow 2's (its common cases pay one call)."""

    def init_taking_integral_numbers(self, value):
        try:
            init(self, value)
        except TypeError:
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                raise
            if int(value) != value:
                raise ValueError(f"Ambiguous dimension: {value}") from None
            init(self, int(value))

    return init_taking_integral_numbers


_KERAS_2_LAYERS = "tf_keras.legacy_tf_layers.normalization"
_KERAS_2_LAYERS_NOW = "tf_keras.src.legacy_tf_layers.normalization"


class _KerasTwoNormalization:
    """TensorFlow's lazy `normalization` module, loaded from where tf_keras keeps it."""

    def __getattr__(self, name: str):
        return getattr(importlib.import_module(_KERAS_2_LAYERS_NOW), name)


def keras_2_normalization(original):
    """What TensorFlow's `layers.normalization` module loads its layers from: its
    own module path where tf_keras has it (or tf_keras is not installed, which its error
    says), else tf_keras's path now. Decided from the files alone: importing tf_keras
    takes seconds, and programs without batch norm never do."""
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        return original
    root = list(spec.submodule_search_locations)[0]
    at = os.path.join(root, *_KERAS_2_LAYERS.split(".")[1:]) + ".py"
    now = os.path.join(root, *_KERAS_2_LAYERS_NOW.split(".")[1:]) + ".py"
    if os.path.exists(at) or not os.path.exists(now):
        return original
    return _KerasTwoNormalization()


def _keeping_default(parser_class):
    class KeepingDefault(parser_class):
        """`parser_class`'s parse of what the command line gives; a default of another
        type is kept as it is."""

        def parse(self, argument):
            if isinstance(argument, str):
                return super().parse(argument)
            return argument

    return KeepingDefault


def flag_keeping_default(parser_class, types: tuple):
    """`tf.compat.v1.flags.DEFINE_*` (the flag's absl parser: `parser_class`, the types
    of its values: `types`) that keeps a default of another type, as TensorFlow 1.0-1.4's
    flags did; absl's own otherwise."""

    def wrap(define):
        def define_as_tensorflow_1(name, default, help, *args, **kwargs):
            try:
                return define(name, default, help, *args, **kwargs)
            except (TypeError, absl.flags.IllegalFlagValueError):
                if default is None or isinstance(default, (str, *types)) or args:
                    # absl's refusal of a default of the flag's type (out of its bounds),
                    # or of a string: absl's to say, as TensorFlow 1's argparse said it.
                    raise
            bounds = {k: kwargs.pop(k) for k in ("lower_bound", "upper_bound") if k in kwargs}
            parser = _keeping_default(parser_class)(**bounds)
            serializer = absl.flags.ArgumentSerializer()
            return absl.flags.DEFINE(parser, name, default, help, serializer=serializer, **kwargs)

        return define_as_tensorflow_1

    return wrap


# TensorFlow internals that libraries on the queue API reach where they were, and where
# TensorFlow 2.21 holds them: tf_slim 1.1.0 (served as tf.contrib.slim) decodes with
# `control_flow_ops.case` and `array_ops.stack` and checks `ops.Tensor`, moved between 2.13
# and 2.16. install() gives each back where missing (install.py); found by
# scanning tf_slim's sources, as tests/test_package.py does again.
# (legacy_module path where libraries look, name, legacy_module path now, its name there)
MOVED = (
    ("framework.ops", "Tensor", "framework.tensor", "Tensor"),
    ("framework.ops", "IndexedSlices", "framework.indexed_slices", "IndexedSlices"),
    ("ops.array_ops", "stack", "ops.array_ops_stack", "stack"),
    ("ops.array_ops", "unstack", "ops.array_ops_stack", "unstack"),
    ("ops.control_flow_ops", "Assert", "ops.control_flow_assert", "Assert"),
    ("ops.control_flow_ops", "case", "ops.control_flow_case", "case"),
    ("ops.control_flow_ops", "cond", "ops.cond", "cond"),
    ("ops.control_flow_ops", "while_loop", "ops.while_loop", "while_loop"),
    ("ops.variable_scope", "variable", "ops.variable_v1", "VariableV1"),
    ("ops.variables", "VariableV1", "ops.variable_v1", "VariableV1"),
    *(
        ("ops.variable_scope", name, "ops.resource_variables_toggle", name)
        for name in (
            "enable_resource_variables",
            "disable_resource_variables",
            "resource_variables_enabled",
        )
    ),
)
