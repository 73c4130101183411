"""Converters for image ops that pfor converts otherwise (block_converters.py puts them in
its registry around pfor's own, which they call where theirs fits).

- Slice with a per-example `begin` (what `random_crop` makes). pfor gathers every
  coordinate of the result with one gather_nd, which made the crop cost more than the whole
  rest of an image pipeline; gathering one axis at a time is 3x faster.
- AdjustContrastv2 with a factor drawn for each example (`random_contrast`): the kernel's
  own arithmetic over the block; AdjustSaturation and AdjustHue (`random_saturation`,
  `random_hue`): the kernel once per example.

Each is made of as few ops as it can be: a block's conversion is traced at every build,
and each op costs the build about 0.1 ms.
"""

import numpy as np
import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals

_pfor = tf_internals.pfor


def slice_(pfor_input, original):
    value, value_stacked, _ = pfor_input.input(0)
    begin, begin_stacked, _ = pfor_input.input(1)
    _, size_stacked, _ = pfor_input.input(2)
    size = None if size_stacked else tf.get_static_value(pfor_input.unstacked_input(2))
    if not begin_stacked or size is None or (size < 0).any():
        return original(pfor_input)
    if not value_stacked:  # One value cut at each example's own place.
        value = tf.repeat(value[None], pfor_input.pfor.loop_len_vector[0], axis=0)
    # Raw ops, each piece made once: this converter runs at every build of a cropping
    # program (a crop's conversion was 35 ops, now 18 for an image).
    columns = graph_ops.Split(axis=tf.constant(1), value=begin, num_split=len(size))
    whole = []  # Axes cut to their whole length: only `begin` 0 is valid, as for one example.
    for axis, length in enumerate(size.tolist()):
        if (
            value.shape.rank is not None
            and tf.compat.dimension_value(value.shape[axis + 1]) == length
        ):
            whole.append(columns[axis])
            continue
        # Out-of-range indices fail the gather, as they failed the slice.
        offsets = tf.constant(np.arange(length)[None, :], begin.dtype)
        indices = graph_ops.AddV2(x=columns[axis], y=offsets)
        value = graph_ops.GatherV2(
            params=value, indices=indices, axis=tf.constant(axis + 1), batch_dims=1
        )
    if whole:
        begins = graph_ops.ConcatV2(values=whole, axis=tf.constant(1)) if whole[1:] else whole[0]
        zero = graph_ops.Equal(x=begins, y=tf.zeros([], begin.dtype))
        valid = graph_ops.All(input=zero, axis=tf.constant([0, 1]))
        message = "Slice: begin must be 0 on an axis whose size is its whole length"
        check = graph_ops.Assert(condition=valid, data=[tf.constant(message)])
        with tf.control_dependencies([check]):
            value = tf.identity(value)
    return _pfor.wrap(value, True)


def adjust_per_example(pfor_input, original):
    """AdjustContrastv2, AdjustSaturation and AdjustHue with a factor drawn for each
    example (`random_contrast`, `random_saturation`, `random_hue`: CIFAR-10's, inception's
    and slim's distortions): pfor's own take one factor for the whole block. The kernel
    itself, once per example of the block (pfor's loop): the same steps written as ops
    over a block (a mean, to HSV and back) gave one ulp more or less on a fifth to a
    quarter of the values, and a seeded program must get legacy's numbers."""
    if not pfor_input.input(1)[1]:
        return original(pfor_input)
    return _pfor._fallback_converter(pfor_input, warn=False)


def contrast(pfor_input, original):
    """AdjustContrastv2 with a factor drawn for each example (`random_contrast`, CIFAR-10's
    distortion) over a whole block, as its CPU kernel computes each image: the sum of each
    channel by folding the pixels in half until one is left (the second half added to the
    first, a middle pixel kept), times the float `1 / pixels`, then `mean + factor * (x -
    mean)`. The same float operations in the same order: legacy's bits, where a mean
    reduced otherwise gave one ulp more or less on a fifth of the values. The loop of
    kernel calls it replaces cost 8 us an example, a third of CIFAR-10's input."""
    images, stacked, _ = pfor_input.input(0)
    factors, factors_stacked, _ = pfor_input.input(1)
    shape = images.shape[1:] if stacked else images.shape
    if not (factors_stacked and images.dtype == tf.float32 and shape.rank == 3):
        return adjust_per_example(pfor_input, original)
    if not shape.is_fully_defined():
        return adjust_per_example(pfor_input, original)
    height, width, channels = shape.as_list()
    flat = tf.reshape(images, [-1, height * width, channels])  # One image each example.
    sums, length = flat, height * width
    # Split, not sliced: a slice is 4 ops, and CIFAR-10's 576 pixels fold 10 times (119
    # ops, 40% of its block's conversion time, made 3 a fold).
    axis = tf.constant(1)
    while length > 1:
        right = length // 2
        left = length - right
        if left > right:  # The middle pixel is kept for the next fold.
            sizes = tf.constant([right, left - right, right])
            head, middle, tail = graph_ops.SplitV(
                value=sums, size_splits=sizes, axis=axis, num_split=3
            )
            sums = graph_ops.ConcatV2(values=[graph_ops.AddV2(x=head, y=tail), middle], axis=axis)
        else:
            head, tail = graph_ops.Split(axis=axis, value=sums, num_split=2)
            sums = graph_ops.AddV2(x=head, y=tail)
        length = left
    mean = sums * tf.constant(np.float32(1.0) / np.float32(height * width))
    adjusted = mean + tf.reshape(factors, [-1, 1, 1]) * (flat - mean)
    return _pfor.wrap(tf.reshape(adjusted, [-1, height, width, channels]), True)


# pfor's converter of each type, called by ours where theirs fits (`original`).
AROUND = {
    "Slice": slice_,
    "AdjustContrastv2": contrast,
    "AdjustSaturation": adjust_per_example,
    "AdjustHue": adjust_per_example,
}
