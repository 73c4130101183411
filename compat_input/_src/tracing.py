"""Tracing our own tf.data functions."""

import functools
from collections.abc import Callable

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
