"""The error types compat_input raises on its own account.

Legacy code catches TensorFlow's error types (`OutOfRangeError`, `InvalidArgumentError`,
`ValueError`, ...), so those stay what they were; what compat_input adds (a pipeline that
cannot be built, a graph it cannot capture) derives from one base class.
"""

import os
import sys
import sysconfig
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # TensorFlow-free: `compat-input run --service` checks an address first.
    import tensorflow as tf

# Code that is not the user's program: installed packages (TensorFlow, tf_slim, Keras) and
# compat_input itself. A path with "/tensorflow/" in it is not enough: a checkout of
# tensorflow/models is the user's program.
_LIBRARIES = tuple(
    os.path.join(path, "")
    for path in {
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    }
)


class CompatInputError(Exception):
    """Base class of the errors compat_input raises itself."""


class CaptureError(CompatInputError, ValueError):
    """The per-example graph between the sources and a batcher cannot run inside tf.data.

    It is a ValueError too, because legacy batchers reject unusable inputs with ValueError.
    """


class LegacyFailsToo(CaptureError):
    """A per-example graph that legacy's queue runners could not run either (a placeholder
    they cannot feed): built, and raised by the first run that reads the input, as legacy
    failed only then. Every other CaptureError runs the input on TensorFlow's own queues
    (batchers/legacy_fallback.py)."""


class ServiceError(CompatInputError):
    """The tf.data service the program asked for (`--service`, `COMPAT_INPUT_SERVICE`) cannot
    serve this input. Raised as it is, never served on legacy queues instead: the trainers
    that share the input would no longer share it."""


class ServiceAddressError(ServiceError, ValueError):
    """A service address that cannot be a dispatcher's."""


class ServiceUnreachable(ServiceError, ConnectionError):
    """No dispatcher answers at the service address."""


def created_at(op: "tf.Operation") -> str:
    """`file:line` where the user's program created `op`, for messages that name it."""
    for frame in reversed(op.traceback or []):
        filename = frame[0] if isinstance(frame, tuple) else frame.filename
        lineno = frame[1] if isinstance(frame, tuple) else frame.lineno
        if not os.path.abspath(filename).startswith(_LIBRARIES):
            return f"{filename}:{lineno}"
    return "<unknown location>"


def described(op: "tf.Operation") -> str:
    """`Type 'name' at file:line`: the op as messages that name it for the user say it."""
    return f"{op.type} '{op.name}' at {created_at(op)}"


def calling_line() -> str:
    """`file:line` of the program's frame that called into compat_input, or ""."""
    frame = sys._getframe(1)
    while frame is not None:
        if not os.path.abspath(frame.f_code.co_filename).startswith(_LIBRARIES):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return ""
