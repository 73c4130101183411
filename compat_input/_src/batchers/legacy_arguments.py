"""A batcher's legacy arguments, checked as the legacy queues checked them (same errors).

batch_plan.py makes a plan from them; these helpers convert and check each one.
"""

import dataclasses
from typing import Optional

import tensorflow as tf

tf1 = tf.compat.v1


def convert(values: list) -> list:
    return [
        v if isinstance(v, tf.SparseTensor) else tf1.convert_to_tensor_or_indexed_slices(v)
        for v in values
    ]


def keep_input(keep_input, enqueue_many: bool):
    if isinstance(keep_input, bool):
        return keep_input
    keep_input = tf.convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    constant = tf.get_static_value(keep_input)
    if keep_input.shape.ndims == 0 and constant is not None:
        return bool(constant)
    return keep_input


def check_dtypes(lists: list) -> None:
    all_types = [[t.dtype for t in tl] for tl in lists]
    for other in all_types[1:]:
        if other != all_types[0]:
            raise TypeError(
                "Expected types to be consistent: "
                f"{', '.join(x.name for x in all_types[0])} vs. {', '.join(x.name for x in other)}."
            )


def shapes(lists: list, shapes, enqueue_many: bool, dynamic_pad: bool) -> list:
    """Per-example shapes, merged across lists, checked as the legacy queues checked them."""
    if shapes is not None:
        result = [tf.TensorShape(s) for s in shapes]
    else:
        result = []
        for i in range(len(lists[0])):
            merged = None
            for tl in lists:
                t = tl[i]
                if isinstance(t, tf.SparseTensor):
                    merged = tf.TensorShape(None)
                    break
                if t.shape.ndims is None:
                    raise ValueError(f"Cannot infer Tensor's rank: {t}")
                s = t.shape.with_rank_at_least(1)[1:] if enqueue_many else t.shape
                if merged is None:
                    merged = s
                else:
                    # Legacy checked that the lists agree and kept the first list's shape
                    # (it dropped merge_with's result): another list's known size (`b`
                    # tiled 99 times) must not constrain the first's (`a`, 1 to 70).
                    merged.merge_with(s)
            result.append(merged)
    dense = [s for s, t in zip(result, lists[0]) if not isinstance(t, tf.SparseTensor)]
    if not dynamic_pad and not all(s.is_fully_defined() for s in dense):
        raise ValueError(f"All shapes must be fully defined: {dense}")
    if dynamic_pad and not all(s.rank is not None for s in dense):
        raise ValueError(f"All shapes must have a defined rank: {dense}")
    return result


@dataclasses.dataclass(frozen=True)
class PerRun:
    """A batch size that each run computes (a fed placeholder, a variable, another input's
    value): each read takes that many examples, as legacy's dequeue_many(tensor) did."""

    count: tf.Tensor

    @property
    def hint(self) -> Optional[int]:
        """The count most runs likely ask for: its value where constant, the default of a
        `placeholder_with_default`; or None."""
        static = tf.get_static_value(self.count)
        if static is not None:
            return int(static)
        op = self.count.op
        while op.type in ("Identity", "Cast") and op.inputs:
            op = op.inputs[0].op
        if op.type != "PlaceholderWithDefault":
            return None
        value = tf.get_static_value(op.inputs[0])
        return None if value is None else int(value)


def batch_size(batch_size, per_run: bool = True):
    """An int, or PerRun where legacy's queue read the size as each dequeue ran; the
    tensor itself without `per_run` (a size read once, as the pipeline starts)."""
    if isinstance(batch_size, PerRun):  # A queue's count, whichever way it was given.
        return batch_size
    if isinstance(batch_size, (tf.Tensor, tf.Variable)):
        batch_size = tf.convert_to_tensor(batch_size)
        static = tf.get_static_value(batch_size)
        if static is not None:
            return int(static)
        return PerRun(batch_size) if per_run else batch_size
    return int(batch_size)
