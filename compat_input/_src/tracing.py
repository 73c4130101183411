"""Tracing our own tf.data functions."""

import functools
from collections.abc import Callable

import tensorflow as tf

from compat_input._src import tf_internals

_ag_ctx = tf_internals.ag_ctx


def without_autograph(build: Callable) -> Callable:
    """Decorator: the tf.data functions that `build` traces are not converted by AutoGraph.

    Ours are plain graph code, with no Python control flow on tensors; AutoGraph parses and
    rewrites each one anyway, a quarter of an image pipeline's build time. The program's
    own code is never traced here: its graph is captured, not called.
    """

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        if _ag_ctx is None:
            return build(*args, **kwargs)
        with _ag_ctx.ControlStatusCtx(status=_ag_ctx.Status.DISABLED):
            return build(*args, **kwargs)

    return wrapper


def stand_in(shape: tf.TensorShape, dtype: tf.DType) -> tf.Tensor:
    """Zeros of `shape` (unknown sizes 0, unknown rank a scalar): a value of the right
    type and rank for a branch of our functions that never hands it on."""
    if shape.rank is None:
        return tf.zeros([], dtype)
    return tf.zeros([d if d is not None else 0 for d in shape.as_list()], dtype)


def after(op) -> tf.Tensor:
    """A constant True that runs `op` first: what a tf.cond branch returns for an op."""
    with tf.control_dependencies([op]):
        return tf.constant(True)
