"""Example lists: one legacy input list, captured, as a function from source elements to examples.

A batcher receives one list of tensors (several for `_join`). Each list becomes an
`ExampleList`: its per-example graph captured between the sources and the tensors
(capture.py), and the rules that turn the captured outputs into examples of the legacy
shapes, with a scalar `keep_input` as a trailing column. `examples_of` maps one list over
its source, a block at a time where that is provably the same (vectorize.py), one example
at a time otherwise.
"""

import dataclasses
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.bad_records import origins
from compat_input._src.capture import capture as capture_lib
from compat_input._src.capture import convertible
from compat_input._src.capture import op_kinds
from compat_input._src.capture import v1_conds
from compat_input._src.capture import vectorize
from compat_input._src.core import dataset_ops
from compat_input._src.core import errors
from compat_input._src.core import graph_ops
from compat_input._src.core import tracing


def flat_targets(tensors: list) -> list:
    flat = []
    for t in tensors:
        flat.extend([t.indices, t.values, t.dense_shape] if isinstance(t, tf.SparseTensor) else [t])
    return flat


def _regroup(tensors: list, outputs: list) -> list:
    it = iter(outputs)
    result = []
    for t in tensors:
        if isinstance(t, tf.SparseTensor):
            result.append(tf.SparseTensor(next(it), next(it), next(it)))
        else:
            result.append(next(it))
    return result


def _sparse_rows(sparse: tf.SparseTensor, keep: tf.Tensor) -> tf.SparseTensor:
    """The rows of `sparse` (examples, under enqueue_many) where `keep` is true, renumbered."""
    rows = sparse.indices[:, 0]
    kept = tf.sparse.retain(sparse, tf.gather(keep, rows))
    renumbered = tf.cumsum(tf.cast(keep, tf.int64)) - 1
    indices = tf.concat([tf.gather(renumbered, kept.indices[:, :1]), kept.indices[:, 1:]], axis=1)
    shape = tf.concat([[tf.reduce_sum(tf.cast(keep, tf.int64))], sparse.dense_shape[1:]], 0)
    return tf.SparseTensor(indices, kept.values, shape)


@dataclasses.dataclass
class ExampleList:
    """One legacy input list: its captured graph and how to turn outputs into examples."""

    tensors: list
    captured: capture_lib.Captured
    keep: Any  # True, a scalar or vector tensor (captured as the last output)
    shapes: list  # per-example shapes
    enqueue_many: bool
    # Under bad_records="skip": a counter of examples that entered the per-example graph.
    entered: Any = None
    what: str = ""  # The batcher, for the mapping report (vectorize.note).
    # With one thread: the batch size that blocks must divide to line up with the batches
    # the batcher takes (batch_plan.py), else None (one example at a time).
    lined_up_with: Optional[int] = None
    # Its examples go into a shuffle buffer, whose contents a bad example's error loses
    # however they were mapped: one thread maps blocks too (batch_plan.py).
    shuffled: bool = False
    # Why the batcher itself takes examples one at a time, whatever their graph (contrib's
    # state saver: each sequence of its own length), else None.
    one_by_one: Optional[str] = None
    padded: bool = False  # dynamic_pad: examples of several shapes by design.

    @property
    def sources(self) -> list:
        return self.captured.sources

    def passthrough(self) -> bool:
        """The source's elements are the examples already, with the right shapes."""
        if self.entered is not None:
            return False
        if not self.captured.passthrough or self.keep is not True or self.enqueue_many:
            return False
        specs = tf.nest.flatten(self.sources[0].dataset.element_spec)
        return all(
            isinstance(spec, tf.TensorSpec) and spec.shape == s
            for spec, s in zip(specs, self.shapes)
        )

    def not_vectorizable(self) -> Optional[str]:
        """Why mapping a block at once is not provably the same as one example at a time,
        or None where it is."""
        if self.one_by_one is not None:
            return self.one_by_one
        if self.entered is not None:
            return "bad_records='skip': a failing block would drop every example in it"
        if self.enqueue_many:
            return vectorize.ENQUEUE_MANY
        if any(isinstance(t, tf.SparseTensor) for t in self.tensors):
            return "a SparseTensor in the list"
        if self.keep is not True and self.keep.shape.ndims != 0:
            return "keep_input per example of enqueue_many"
        specs = [s for src in self.sources for s in tf.nest.flatten(src.dataset.element_spec)]
        if not specs or not all(isinstance(s, tf.TensorSpec) for s in specs):
            return "no source, or a source of non-dense elements"
        for t, shape in zip(self.tensors, self.shapes):
            if not shape.is_fully_defined():
                # Examples of several shapes do not stack into blocks.
                if self.padded:
                    return (
                        f"examples of several shapes, padded per batch (dynamic_pad): "
                        f"'{t.name}' at {errors.created_at(t.op)} has shape {shape}; each is "
                        "made on its own (nothing to change where shapes differ by design)"
                    )
                return (
                    f"examples of several shapes: '{t.name}' at {errors.created_at(t.op)} "
                    f"has shape {shape}; give it a fixed shape (tf.reshape, a resize, the "
                    "batcher's shapes=) and blocks of examples stack"
                )
        # Checks stay checks; unseeded random ops draw for each example of a block, as they
        # drew for each example before. Other state would see one call per block.
        for op in self.captured.ops:
            if not op_kinds.per_example_safe(op):
                return op_kinds.why_one_at_a_time(op)
        switch = v1_conds.unconvertible(self.captured.ops, self.captured.per_example)
        if switch is not None:  # pfor would refuse it: the block is not traced to find out.
            return vectorize.no_conversion(errors.described(switch))
        op = convertible.unconverted(self.captured.ops, self.captured.per_example)
        if op is None:
            return None
        # The same: pfor would refuse it, and the block is not traced.
        where = errors.described(op)
        if all(t.shape.is_fully_defined() for t in op.outputs):
            return vectorize.no_conversion(where)
        # Moved after the batcher, values of a shape of their own would not batch either.
        return (
            f"no block conversion for {where}, whose values have a shape of their own in "
            "each example (an image decoded at its own size): each example is made on its "
            "own, as legacy's threads made them"
        )

    def one_at_a_time(self) -> str:
        """Why a batcher with no parallel calls maps this list one example at a time."""
        order = next((op for op in self.captured.ops if op_kinds.order_sensitive(op)), None)
        if order is not None:
            return op_kinds.why_one_at_a_time(order)
        return self.not_vectorizable() or vectorize.ONE_THREAD

    def key(self) -> Optional[str]:
        """Equal for lists whose `examples` compute the same (tracing.shared_map), or None."""
        if self.captured.key is None or self.entered is not None:
            return None
        parts = [(type(t).__name__, t.dtype.name) for t in self.tensors]
        keep = True if self.keep is True else self.keep.shape.ndims
        return f"examples_{self.captured.key}_{parts}_{self.shapes}_{keep}_{self.enqueue_many}"

    def _shapes_and_dtypes(self) -> tuple:
        shapes, dtypes = list(self.shapes), [t.dtype for t in self.tensors]
        if self.keep is not True:  # The keep_input column.
            shapes.append(tf.TensorShape([]))
            dtypes.append(tf.bool)
        return shapes, dtypes

    def example_bytes(self) -> int:
        """About how many bytes one of its examples holds (vectorize.example_bytes)."""
        return vectorize.example_bytes(*self._shapes_and_dtypes())

    def block_size(self) -> int:
        """Examples per vectorized block (see vectorize.block_size); where blocks line up
        with batches, the largest divisor of the batch size that is no bigger."""
        most = vectorize.block_size(*self._shapes_and_dtypes())
        size = self.lined_up_with
        if size is None:
            return most
        return max(d for d in range(1, min(size, most) + 1) if size % d == 0)

    def examples(self, element, ordinal=None, log=None) -> tuple:
        """The element's values, shaped, with a scalar keep_input as a trailing column.

        Everything per element happens in this one map: each extra tf.data map costs tens of
        microseconds per element. With a `log`, the example is logged as it enters and
        leaves, so that an error can name the record it came from.
        """
        with tf.name_scope(tracing.EXAMPLE_SCOPE):
            entering = []
            if log is not None:
                entering.append(log.enter(ordinal, self.captured.origin(element)))
            if self.entered is not None:
                # Counted before the graph runs, so an example that fails is counted too.
                one = tf.constant(1, tf.int64)
                entering.append(
                    graph_ops.AssignAddVariableOp(resource=self.entered.handle, value=one)
                )
            with tf.control_dependencies(entering):
                outputs = self.captured(element, ordinal)
            values = self._shaped(outputs)
            if log is None:
                return values
            with tf.control_dependencies(tf.nest.flatten(values, expand_composites=True)):
                left = log.leave(ordinal)
            with tf.control_dependencies([left]):
                return tf.nest.map_structure(tf.identity, values, expand_composites=True)

    def _shaped(self, outputs: list) -> tuple:
        values = _regroup(self.tensors, outputs[: len(outputs) - (0 if self.keep is True else 1)])
        keep = None if self.keep is True else outputs[-1]
        if keep is not None and self.keep.shape.ndims == 1:
            values = [
                _sparse_rows(v, keep)
                if isinstance(v, tf.SparseTensor)
                else tf.boolean_mask(v, keep)
                for v in values
            ]
            keep = None
        lead = tf.TensorShape([None] if self.enqueue_many else [])
        values = [
            v
            if _shaped_already(v, lead.concatenate(s))
            else tf.ensure_shape(v, lead.concatenate(s))
            for v, s in zip(values, self.shapes)
        ]
        return tuple(values) + (() if keep is None else (keep,))


def _shaped_already(value, shape: tf.TensorShape) -> bool:
    """Whether `value` needs no check of `shape`: a SparseTensor, no shape to check, or a
    static shape that already is it. A queue of a reader's records (skip_thoughts',
    im2txt's, inception's) then has a per-example function that only hands its element on,
    which tf.data does without calling it (an `ensure_shape` there cost 0.3-1.3 us a
    record)."""
    if isinstance(value, tf.SparseTensor) or shape.rank is None:
        return True
    return value.shape.is_fully_defined() and value.shape == shape


def capture_list(tensors: list, keep, what: str, shapes: list, enqueue_many: bool) -> ExampleList:
    targets = flat_targets(tensors)
    if keep is not True and keep is not False:
        targets.append(keep)
    captured = capture_lib.capture(targets, what, defer_errors=True)
    keep = True if keep is False else keep
    return ExampleList(tensors, captured, keep, shapes, enqueue_many, what=what)


def example_log(item: ExampleList, skipping: bool, logs: list) -> Optional[origins.ExampleLog]:
    """Under bad_records="skip", a log of the examples in flight, to name the skipped ones.

    Only then: a stateful op per example costs microseconds, and the map already runs one
    example at a time under that policy.
    """
    if not skipping:
        return None
    log = origins.ExampleLog(item.captured.origin_kind())
    logs.append(log)
    return log


def per_example_map(dataset: tf.data.Dataset, function, parallel: dict) -> tf.data.Dataset:
    """`dataset.map(function)` where an OutOfRangeError raised by the per-example graph
    (`limit_epochs`, `count_up_to`) ends the input, as it ended the legacy queue runner.

    TensorFlow 2's `Dataset.map` turns that error into InvalidArgumentError; the
    `tf.compat.v1` map keeps the TF1 meaning (no cardinality to preserve), with the same
    kernel and the same speed. Traced as ours (`tracing.shared_map`, for this pipeline
    alone), the function is instantiated on its device, with no Grappler pass of its own
    (youtube-8m's shape's block parse: 9 ms of its first batch).
    """
    return tracing.shared_map(
        dataset,
        None,
        dataset_ops.components(function),
        parallel=parallel,
        preserve_cardinality=False,
        program=True,
    )


def map_examples(dataset: tf.data.Dataset, examples, numbered: bool, parallel) -> tf.data.Dataset:
    """`examples(element, ordinal)` over `dataset`; elements are numbered only where asked
    (for a log, or for draws by position), else the ordinal is None."""
    if not numbered:
        return per_example_map(dataset, lambda *element: examples(element, None), parallel)
    numbered = dataset_ops.enumerate_(dataset)
    return per_example_map(numbered, lambda i, *element: examples(element, i), parallel)


# Blocks of fewer examples than this save less than the block's own steps (batch, the
# block's function call, unbatch) cost.
_SMALLEST_BLOCK = 4


def _fixed_length(sources: list, positional: bool) -> tuple:
    """Where the flat element holds strings of one length (vectorize.map_blocks)."""
    found, offset = [], 1 if positional else 0  # The position comes first.
    for source in sources:
        found += [offset + i for i in source.fixed_length]
        offset += len(tf.nest.flatten(source.dataset.element_spec, expand_composites=True))
    return tuple(found)


def examples_of(item: ExampleList, elements, parallel, skipping: bool, logs: list):
    """The examples of one list made from its source's `elements`."""
    key = item.key()
    positional = item.captured.positional  # Its draws need each element's position.
    # A block at a time (vectorize.py). With one thread only where blocks line up with
    # the batches (`lined_up_with`): a bad record anywhere in a block then fails the batch it
    # is part of, as it did one example at a time, and the examples before it are found
    # again for the final partial batch (bad_records/located_errors.py).
    why_not = item.not_vectorizable() if parallel else item.one_at_a_time()
    in_blocks = parallel
    lined_up = item.lined_up_with is not None or item.shuffled
    # ONE_THREAD: shapes are fully defined, so there is a block size.
    if lined_up and why_not == vectorize.ONE_THREAD and item.block_size() >= _SMALLEST_BLOCK:
        why_not = None
        if not item.captured.stateful:
            # Blocks are made ahead, in order: an error still comes after every block
            # before it, and no state sees the difference.
            in_blocks = {"num_parallel_calls": tf.data.AUTOTUNE, "deterministic": True}
    blocks = vectorize.blocks_or_none(
        item.what,
        why_not,
        item.block_size,
        lambda block: vectorize.map_blocks(
            dataset_ops.enumerate_(elements, flat=True) if positional else elements,
            [lambda e: item.examples(e[1:], e[0])] if positional else [item.examples],
            in_blocks,
            block=block,
            key=key,
            fixed=_fixed_length(item.captured.sources, positional),
            example_size=item.example_bytes(),
        ),
    )
    if blocks is not None:
        return blocks
    log = example_log(item, skipping, logs)
    if log is None and key is not None:
        # The tf.compat.v1 map's choice: an OutOfRangeError from the graph ends the input.
        return tracing.shared_map(
            dataset_ops.enumerate_(elements) if positional else elements,
            key,
            (lambda e: item.examples(e[1], e[0])) if positional else item.examples,
            parallel=parallel,
            preserve_cardinality=False,
            program=True,
        )
    return map_examples(
        elements,
        lambda element, i: item.examples(element, i, log),
        log is not None or positional,
        parallel,
    )
