"""What input positions cost checkpoints, and the positions left out for it.

A position holds what the pipeline's buffers held when it was saved (a shuffle buffer's
examples, batches read ahead), which legacy's queues never saved: skip_thoughts' checkpoints
grew by 198 MB each, and each save by about 16 s. A pipeline whose buffers can hold more
than `input_position_max_mb` is left out at build (`too_big`); what the others added to the
last checkpoint, and which were left out, is said at exit (`compat-input run`).
"""

import math
import os
from typing import Optional

import tensorflow as tf

from compat_input._src.core.options import options

# What one buffered example's component adds to a saved position beyond its values: tf.data
# writes each as a tensor of its own, under its own key (100,000 buffered scalars: 18 MB).
_COMPONENT_BYTES = 180
# A string's value is unknown at build: counted at this much, a floor for a record or a line.
_STRING_BYTES = 64


def buffered(examples: int, example_list) -> tuple:
    """(`examples`, about how many MB a position holds whose buffers hold that many of
    `example_list`'s examples): their per-example shapes, unknown dimensions counted as 1."""
    per_example = 0
    for shape, dtype in zip(example_list.shapes, (t.dtype for t in example_list.tensors)):
        dims = tf.TensorShape(shape)
        values = math.prod(d or 1 for d in dims.as_list()) if dims.rank is not None else 1
        size = _STRING_BYTES if dtype == tf.string else tf.as_dtype(dtype).size
        per_example += _COMPONENT_BYTES + values * size
    return examples, examples * per_example / 1e6


def too_big(source) -> Optional[str]:
    """Why `source`'s position is left out of checkpoints for its size, or None.

    Legacy's queues saved nothing. A position holds its buffers (a shuffle's examples,
    batches read ahead): skip_thoughts' 640,000-record queue put 198 MB into each
    checkpoint and about 16 s into each save (0.61x legacy's wall time), the CIFAR-10
    tutorial's 20,384 distorted images would put about 150 MB. Such a position is worth
    less than it costs to most programs; `input_position_max_mb` sets where."""
    limit = options.input_position_max_mb
    if source.buffered is None or limit is None:
        return None
    examples, mb = source.buffered
    if mb <= limit:
        return None
    return (
        f"its buffers can hold about {mb:,.0f} MB ({examples:,} examples, its capacity), over "
        f"input_position_max_mb={limit:g}"
    )


# Pipelines left out of checkpoints for their size, with why: said at exit where the program
# wrote a checkpoint (`positions_said`).
left_out: dict = {}


def pipeline_of_key(key: str) -> str:
    """The pipeline a position's checkpoint key names (`compat_input/<name>/position...`)."""
    return key[len("compat_input/") :].rsplit("/position", 1)[0]


# The last checkpoint written (its prefix), the seconds its save took and whether it held
# input positions (checkpoint.noting_save): what they cost it, and which were left out,
# is said at exit (`positions_said`, `compat-input run`).
last_written: list = [None, 0.0, False]


def positions_said(at_least_mb: float = 1.0):
    """A line on what input positions took of the last checkpoint written, or None.

    A position holds what the pipeline's buffers held when it was saved (a shuffle buffer's
    examples, batches read ahead): its size is the checkpoint's data less the model's
    variables, which its index gives by shape and type. Legacy's queues saved nothing; so
    that a checkpoint grown by them is never a surprise (im2txt's: 524 MB of 673)."""
    prefix, seconds, held = last_written
    if not held:
        return None
    try:
        reader = tf.train.load_checkpoint(prefix)
        shapes, types = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
        data = sum(os.path.getsize(f) for f in tf.io.gfile.glob(f"{prefix}.data-*"))
    except (tf.errors.OpError, ValueError, TypeError, OSError):
        return None
    # Positions are variants (and their kept rows, strings); the model's are counted.
    model = sum(
        math.prod(shapes[key]) * dtype.size
        for key, dtype in types.items()
        if dtype not in (tf.variant, tf.string)
    )
    mb, total = (data - model) / 1e6, data / 1e6
    if mb < at_least_mb:
        return None
    names = sorted({pipeline_of_key(k) for k in shapes if "/position." in k})
    return (
        f"the last checkpoint written ({os.path.basename(prefix)}) holds about {mb:,.0f} MB "
        f"of input positions ({', '.join(names)}) of its {total:,.0f} MB, and its save "
        f"took {seconds:.1f} s: what their buffers held (shuffle buffers, batches read "
        "ahead), so that a restore resumes the input exactly; legacy's queues saved none. "
        "compat_input.configure(input_position_max_mb=N) leaves out inputs whose buffers "
        f"can hold more than N MB ({options.input_position_max_mb or 'no limit'} now), "
        "save_input_position=False every input"
    )


def left_out_said():
    """A line naming the inputs left out of checkpoints for their size, or None. Said only
    where the program wrote a checkpoint: elsewhere no position was missed."""
    if last_written[0] is None or not left_out:
        return None
    return (
        "left out of checkpoints, as legacy's queues were: "
        + "; ".join(f"'{name}' ({why})" for name, why in sorted(left_out.items()))
        + ". A restore starts such an input afresh; compat_input.configure("
        "input_position_max_mb=None) saves it, so that a restore resumes it exactly"
    )
