"""The converters compat_input adds to pfor (`tf.vectorized_map`'s engine) while it
rewrites its own per-example graphs for a block (vectorize.py); pfor's registry is put back
exactly as it was afterwards (`converters`).

- DecodeRaw, which pfor lacks (every CIFAR- or MNIST-style reader uses it). One call over a
  block needs strings of one length. Where the graph reshapes the bytes to a fixed shape,
  any other length fails anyway; elsewhere a block whose strings differ is decoded from a
  stand-in of one length and then thrown away for the example-at-a-time result, so a
  program that decodes records of several lengths gets what it got before.
- ParseSequenceExampleV2 (`parse_single_sequence_example`), which pfor lacks: once on
  the block's records, where its feature lists are reshaped to a fixed shape.
- Slice with a per-example `begin` (`random_crop`), AdjustContrastv2, AdjustSaturation
  and AdjustHue with a factor drawn for each example (image_converters.py).
- the stateless twins of seeded random ops, each example's draws from its own counter
  (random_draws.py).
- string ops that work element by element (string_to_number, regex_replace, hashing,
  ...) and table lookups, which pfor lacks: one call on the whole block.
- resizes (`resize_images`), which pfor lacks: one call on the block, to one size.
- v1 conds (`Switch` / `Merge`, what `tf.cond` makes in TF1 behaviour, e.g. in
  `random_flip_left_right`), which pfor lacks: it converts only the `If` op of TF2's
  (v1_conds.py).
"""

import contextlib
import functools
import logging
import threading

import tensorflow as tf

from compat_input._src.capture import image_converters
from compat_input._src.capture import random_draws
from compat_input._src.capture import v1_conds
from compat_input._src.core import tf_internals

_pfor = tf_internals.pfor
_lock = threading.Lock()
_local = threading.local()


def _pinned(tensor: tf.Tensor) -> bool:
    """Whether every example whose `tensor` differs in length (its first axis; any others
    fixed) fails anyway.

    True when `tensor`, or its tail from a fixed index, is reshaped to a fixed shape: the
    CIFAR and image-bytes patterns, a sequence of frames of one count. Every op of the
    per-example graph runs for every example, so that reshape fails any other length, one
    example at a time or not.
    """
    if tensor.shape.rank is None or tensor.shape.rank < 1:
        return False
    if not tensor.shape[1:].is_fully_defined():
        return False
    for consumer in tensor.consumers():
        if consumer.type in ("Cast", "Identity", "EnsureShape"):
            if _pinned(consumer.outputs[0]):
                return True
        elif consumer.type == "Reshape" and consumer.inputs[0] is tensor:
            shape = tf.get_static_value(consumer.inputs[1])
            if shape is not None and (shape > 0).all():
                return True
        elif (
            consumer.type == "StridedSlice"
            and consumer.inputs[0] is tensor
            and tensor.shape.rank == 1
        ):
            # value[b:]: for lengths of at least b, one length out for each length in.
            begin, end, strides = (tf.get_static_value(t) for t in consumer.inputs[1:])
            masks = {
                m: consumer.get_attr(m)
                for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask")
            }
            if (
                begin is not None
                and strides is not None
                and strides.tolist() == [1]
                and (begin.tolist()[0] >= 0 or masks["begin_mask"] & 1)
                and masks["end_mask"] & 1
                and not (masks["ellipsis_mask"] or masks["new_axis_mask"])
                and not consumer.get_attr("shrink_axis_mask")
                and _pinned(consumer.outputs[0])
            ):
                return True
    return False


class NotBlockwise(ValueError):
    """An op this module converts only in part, used as it is not: `op` (the captured copy
    of the program's) and `why`, for the reason reported at exit."""

    def __init__(self, op: tf.Operation, why: str):
        super().__init__(f"{op.type} '{op.name}' {why}")
        self.op, self.why = op, why


def _parse_sequence(pfor_input):
    """ParseSequenceExampleV2 (`parse_single_sequence_example`) on a block: the op itself
    on the block's records, as ParseExampleV2 is (pfor's). A dense feature list is of its
    own length in each example and the block's is padded to the longest: taken only where
    the program reshapes it to a fixed shape (`_pinned`, cross_conv's frames), with every
    example checked to be of one length, as that reshape checked each alone. Ragged
    features and feature lists used otherwise leave the batcher one example at a time."""
    op = pfor_input.op
    if op.get_attr("context_ragged_value_types") or op.get_attr("feature_list_ragged_value_types"):
        raise NotBlockwise(op, "parses RaggedFeatures, which a block does not convert")
    if any(pfor_input.input(i)[1] for i in range(1, len(pfor_input.inputs))):
        raise NotBlockwise(op, "takes keys, defaults or names that differ between examples")
    names = tf.get_static_value(pfor_input.unstacked_input(1))
    if names is None or names.size:
        # Its errors name each record: one name can not stand for a block's.
        raise NotBlockwise(op, "names its record (example_name)")
    inputs = [pfor_input.stacked_input(0)]
    inputs += [pfor_input.unstacked_input(i) for i in range(1, len(pfor_input.inputs))]
    outputs = _pfor._create_op(
        op.type, inputs, [t.dtype for t in op.outputs], attrs=op.node_def.attr
    ).outputs
    lists = op.get_attr("Nfeature_list_dense")
    first = 3 * op.get_attr("Ncontext_sparse") + len(op.get_attr("Tcontext_dense"))
    first += 3 * op.get_attr("Nfeature_list_sparse")
    keys = tf.get_static_value(op.inputs[6])
    checks = []
    for i in range(lists):
        values, lengths = op.outputs[first + i], outputs[first + lists + i]
        if not values.consumers():
            continue
        key = keys[i].decode() if keys is not None else str(i)
        if not _pinned(values):
            raise NotBlockwise(
                op,
                f"gives feature list '{key}' of a length of its own in each example; "
                "where the program fixes its length (a reshape to fixed dims), blocks run",
            )
        checks.append(
            tf.debugging.assert_equal(
                tf.reduce_min(lengths, keepdims=True),
                tf.reduce_max(lengths, keepdims=True),
                message=f"parse_single_sequence_example: feature list '{key}' is of "
                "several lengths where the program reshapes it to one",
            )
        )
    if checks:
        with tf.control_dependencies(checks):
            outputs = [tf.identity(t) for t in outputs]
    return [_pfor.wrap(t, True, True) for t in outputs]


def _decode_raw(pfor_input):
    strings = pfor_input.stacked_input(0)
    decoded = pfor_input.op.outputs[0]
    if _pinned(decoded) or strings.ref() in getattr(_local, "fixed", set()):
        # Strings of another length fail this graph anyway, or there are none (a
        # fixed-length reader's records): no stand-in, and no example-at-a-time fallback
        # traced beside the block (a third of a CIFAR-10 input's build).
        return _pfor.wrap(_decode(strings, pfor_input), True)
    lengths = tf.reshape(tf.strings.length(strings), [-1])
    uniform = tf.logical_or(
        tf.equal(tf.size(lengths), 0),
        tf.equal(tf.reduce_min(lengths), tf.reduce_max(lengths)),
    )
    uniforms = getattr(_local, "uniforms", None)
    if uniforms is None:
        # Someone else's vectorized_map while ours runs: no stand-in, a clear error.
        check = tf.debugging.Assert(uniform, ["decode_raw: strings of different lengths"])
        with tf.control_dependencies([check]):
            strings = tf.identity(strings)
    else:
        uniforms.append(uniform)
        first = tf.reshape(strings, [-1])[:1]
        strings = tf.cond(
            uniform,
            lambda: strings,
            lambda: tf.reshape(tf.tile(first, [tf.size(strings)]), tf.shape(strings)),
        )
    return _pfor.wrap(_decode(strings, pfor_input), True)


def _decode(strings: tf.Tensor, pfor_input) -> tf.Tensor:
    return tf.io.decode_raw(
        strings,
        pfor_input.get_attr("out_type"),
        little_endian=pfor_input.get_attr("little_endian"),
    )


def _resize(pfor_input):
    """A resize to one size for every example: the kernel resizes each image of a batch on
    its own, so a block's images are one batch of it, each with the values it had alone."""
    op = pfor_input.op
    if pfor_input.input(1)[1]:
        raise NotBlockwise(op, "resizes each example to a size of its own")
    images = pfor_input.stacked_input(0)  # [block, images, height, width, channels]
    shape = tf.shape(images)
    flat = tf.reshape(images, tf.concat([[-1], shape[2:]], 0))
    size = pfor_input.unstacked_input(1)
    (resized,) = _pfor._create_op(
        op.type, [flat, size], [op.outputs[0].dtype], op.node_def.attr
    ).outputs
    block = tf.reshape(resized, tf.concat([shape[:2], tf.shape(resized)[1:]], 0))
    block.set_shape(images.shape[:2].concatenate(resized.shape[1:]))
    return _pfor.wrap(block, True)


# Ops that work element by element on one input (index given), the others being
# settings shared by every example: over a block they run once on the stacked input.
# pfor has no converter for them; legacy input code uses them on every line it parses.
_ELEMENTWISE = {
    **dict.fromkeys(
        [
            "AsString",
            "DecodeBase64",
            "EncodeBase64",
            "RegexFullMatch",
            "RegexReplace",
            "StaticRegexFullMatch",
            "StaticRegexReplace",
            "StringLength",
            "StringLower",
            "StringStrip",
            "StringToHashBucket",
            "StringToHashBucketFast",
            "StringToHashBucketStrong",
            "StringToNumber",
            "StringUpper",
        ],
        0,
    ),
    "LookupTableFindV2": 1,  # (table, keys, default value)
}


def _elementwise(pfor_input):
    elements = _ELEMENTWISE[pfor_input.op_type]
    for index in range(len(pfor_input.inputs)):
        if index != elements and pfor_input.input(index)[1]:
            raise ValueError(f"{pfor_input.op_type}: input {index} differs between examples")
    inputs = [pfor_input.input(i)[0] for i in range(len(pfor_input.inputs))]
    inputs[elements] = pfor_input.stacked_input(elements)
    op = pfor_input.op
    outputs = _pfor._create_op(
        op.type, inputs, [t.dtype for t in op.outputs], attrs=op.node_def.attr
    ).outputs
    return [_pfor.wrap(t, True) for t in outputs]


class _QuietConversion(logging.Filter):
    """Drops pfor's log records from the thread that converts our graph, and only those.

    A graph pfor cannot convert is expected here (the per-example map takes over); pfor
    logs it at ERROR level with the whole op, which would alarm users. The logger's level is
    never changed: records of other threads, and every record but pfor's, pass.
    """

    def __init__(self):
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.thread != self.thread or "parallel_for" not in record.pathname:
            return True
        if record.levelno >= logging.ERROR and not getattr(_local, "failure", ""):
            _local.failure = record.getMessage()[:2000]  # The op it failed on, first.
        return False


def last_failure() -> str:
    """pfor's report of the op it last failed to convert in this thread, or ""."""
    return getattr(_local, "failure", "")


_RESIZES = ("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBicubic", "ResizeArea")


def _ours() -> dict:
    ours = {
        "DecodeRaw": _decode_raw,
        "ParseSequenceExampleV2": _parse_sequence,
        "Switch": v1_conds.switch,
        "Merge": v1_conds.merge,
    }
    ours.update(dict.fromkeys(random_draws.STATELESS_TYPES, random_draws.vectorize_twin))
    ours.update(dict.fromkeys(_RESIZES, _resize))
    return ours


def converted_types() -> frozenset:
    """The op types that a block conversion exists for while `converters` is in force."""
    return frozenset({*(_pfor._pfor_converter_registry if _pfor else ()), *_ours(), *_ELEMENTWISE})


@contextlib.contextmanager
def converters(uniforms: list, fixed: tuple = ()):
    if _pfor is None:
        yield
        return
    # pfor has no public way to add a converter: its registry is changed while our own
    # graph is converted, under a lock, and put back exactly as it was afterwards.
    registry = _pfor._pfor_converter_registry
    logger = tf.get_logger()
    quiet = _QuietConversion()
    with _lock:
        logger.addFilter(quiet)
        ours = _ours()
        # pfor's own, called by ours where theirs fits.
        around = image_converters.AROUND
        saved = {name: registry.get(name) for name in (*around, *ours, *_ELEMENTWISE)}
        for name in _ELEMENTWISE:
            if saved[name] is None:
                registry[name] = _elementwise
        for name, converter in ours.items():
            if saved[name] is None:
                registry[name] = converter
        for name, converter in around.items():
            if saved[name] is not None:
                registry[name] = functools.partial(converter, original=saved[name])
        _local.uniforms = uniforms
        _local.fixed = {t.ref() for t in fixed}
        _local.failure = ""
        try:
            yield
        finally:
            _local.uniforms = None
            _local.fixed = set()
            logger.removeFilter(quiet)
            for name, converter in saved.items():
                if converter is None:
                    registry.pop(name, None)
                else:
                    registry[name] = converter
