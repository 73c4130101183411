"""The error types compat_input raises on its own account.

Legacy code catches TensorFlow's error types (`OutOfRangeError`, `InvalidArgumentError`,
`ValueError`, ...), so those stay what they were; what compat_input adds (a pipeline that
cannot be built, a graph it cannot capture) derives from one base class.
"""


class CompatInputError(Exception):
    """Base class of the errors compat_input raises itself."""


class CaptureError(CompatInputError, ValueError):
    """The per-example graph between the sources and a batcher cannot run inside tf.data.

    It is a ValueError too, because legacy batchers reject unusable inputs with ValueError.
    """
