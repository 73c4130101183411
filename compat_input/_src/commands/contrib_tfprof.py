"""tf.contrib.tfprof as TensorFlow 2 keeps it: `tf.compat.v1.profiler`, with the names of
contrib's `model_analyzer` and `tfprof_logger` that public TF1 programs call (resnet's
trainer prints its parameter count and FLOPs through them).

contrib's `print_model_analysis(graph, run_meta, op_log, tfprof_cmd, tfprof_options)` is
`tf.compat.v1.profiler.profile(graph, run_meta, op_log, cmd, options)` under its old
names, and its option dicts are the ones `ProfileOptionBuilder` builds. Every other name
is tf.compat.v1.profiler's.
"""

import types

import tensorflow as tf

_PROFILER = tf.compat.v1.profiler
_OPTIONS = _PROFILER.ProfileOptionBuilder


def print_model_analysis(
    graph, run_meta=None, op_log=None, tfprof_cmd="scope", tfprof_options=None
):
    """tf.contrib.tfprof.model_analyzer.print_model_analysis: the profile of `graph` (a
    GraphNodeProto, or MultiGraphNodeProto for the "code" and "op" views), printed as the
    options say."""
    options = _OPTIONS.trainable_variables_parameter() if tfprof_options is None else tfprof_options
    return _PROFILER.profile(
        graph, run_meta=run_meta, op_log=op_log, cmd=tfprof_cmd, options=options
    )


model_analyzer = types.SimpleNamespace(
    print_model_analysis=print_model_analysis,
    TRAINABLE_VARS_PARAMS_STAT_OPTIONS=_OPTIONS.trainable_variables_parameter(),
    FLOAT_OPS_OPTIONS=_OPTIONS.float_operation(),
    PRINT_ALL_TIMING_MEMORY=_OPTIONS.time_and_memory(),
)
tfprof_logger = types.SimpleNamespace(write_op_log=_PROFILER.write_op_log)


def __getattr__(name: str):
    return getattr(_PROFILER, name)
