"""Mapping the per-example graph over blocks of examples at once.

tf.data calls a map function once per element, and each call costs microseconds before the
first op runs. `tf.vectorized_map` (pfor) rewrites the per-example graph into one graph
over a block, so that cost and every kernel launch are paid once per block (10x on
decode_csv, 3x on an image pipeline). batchers/batching.py decides where this is provably the same
as one example at a time; this module does the rewriting and never settles for less than
the per-example map: a graph that pfor cannot convert op for op is not vectorized at all
(pfor's own fallback, a while loop over the block, is slower than a parallel map).

The converters pfor lacks for legacy input graphs (decode_raw, per-example crops and
contrast, string ops, table lookups, v1 conds) are added while our own graphs are
converted (block_converters.py). Text split into tokens, whose count differs from
example to example, is converted before pfor sees it (split_tokens.py).

`mappings` records how each batcher's per-example graph was mapped, and why not by blocks
where it was not: `compat-input run` reports it at exit, so that a slow path is never silent.
"""

import os
import re
from collections.abc import Callable
from typing import Optional

import tensorflow as tf

from compat_input._src.capture import block_converters
from compat_input._src.capture import captured_graphs
from compat_input._src.capture import split_tokens
from compat_input._src.core import dataset_ops
from compat_input._src.core import errors
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing

_pfor = tf_internals.pfor

BLOCK = 128
# A block's values, per op, stay near this size: big examples (images) come fewer to a
# block. Bigger blocks of them only held more memory: 30 MB more on the image benchmark for
# 128 examples a block than for 32, at the same speed.
_BLOCK_BYTES = 512 * 1024


# Blocks being mapped at once hold at most about this much, where num_threads blocks would
# hold more.
_IN_FLIGHT_BYTES = 64 * _BLOCK_BYTES


def example_bytes(shapes: list, dtypes: list) -> int:
    """About how many bytes an example of these (fully defined) shapes and types holds."""
    return sum(
        max(1, shape.num_elements()) * (64 if dtype == tf.string else dtype.size)
        for shape, dtype in zip(shapes, dtypes)
    )


def block_size(shapes: list, dtypes: list) -> int:
    """Examples per block for examples of these (fully defined) shapes and types."""
    size = example_bytes(shapes, dtypes)
    block = BLOCK
    while block > 16 and block * size > _BLOCK_BYTES:
        block //= 2
    return block


class NotVectorized(Exception):
    """The per-example graph cannot be mapped a block at a time; the message says why."""


ONE_THREAD = (
    "num_threads=1: one example at a time, so that a bad record fails alone after every "
    "record before it, as legacy's one thread did; blocks of examples run where "
    "num_threads > 1, where they go into a shuffle buffer, or where they line up with the "
    "batches: `batch` of one list, a fixed batch_size, every example kept"
)

# Why a list's graph is not mapped over blocks of examples: it takes the program's own.
ENQUEUE_MANY = "enqueue_many"

# How each batcher's per-example graph was mapped, in build order: `(batcher, how)`.
# `compat-input run` reports it at exit, so that a slow path is never silent.
mappings: list = []


def note(what: str, how: str) -> None:
    mappings.append((what, how))


def blocks_or_none(what: str, why_not: Optional[str], block_size: Callable, make: Callable):
    """`make(block)` (a `map_blocks` of `block = block_size()` examples a block) where
    `why_not` is None, else None; None too where pfor cannot convert. Noted for `what`."""
    if why_not is None:
        try:
            block = block_size()  # Only examples of fully defined shapes have one.
            blocks = make(block)
            note(what, f"vectorized, {block} examples a block")
            return blocks
        except NotVectorized as e:
            why_not = str(e)
    if why_not == ENQUEUE_MANY:
        # The program's own graph took the blocks it enqueued: not one example at a time.
        note(what, "a block at a time, as the program enqueued them (enqueue_many)")
    else:
        note(what, f"per example ({why_not})")
    return None


def no_conversion(where: str) -> str:
    """Why an op with no block conversion (`where`: the op, made where) runs per example."""
    return (
        f"no block conversion for {where}; the rest of the per-example graph would run a "
        "block at a time with it after the batcher, on the batch"
    )


def _reason(error: Exception) -> str:
    """pfor's error, in a line: which op of the program it could not convert, made where,
    and what would make the rest of the graph run a block at a time."""
    if isinstance(error, TypeError) and error.__context__ is not None:
        # pfor's own report of a converter's error fails on imported ops (no traceback).
        error = error.__context__
    if isinstance(error, (split_tokens.NotTokenwise, block_converters.NotBlockwise)):
        op = captured_graphs.program_op(error.op.name)
        where = errors.described(op) if op else error.op.type
        if isinstance(error, block_converters.NotBlockwise):
            return f"{where} {error.why}"
        return (
            f"{where} {error.why}: a split's tokens run a block at a time through ops "
            "token by token, up to their count (tf.size) or a fixed length (tf.pad, then "
            "[:n]); anything else on them runs one example at a time"
        )
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    # TensorFlow's shape errors go on to name pfor's own node ("for '{{node
    # compat_input_example/loop_body/...}}' with input shapes ..."): no name of the program's.
    text = re.split(r" for '\{\{node ", text)[0].rstrip(" .")
    op = _program_op(_converting(error) + str(error) + "\n" + block_converters.last_failure())
    where = errors.described(op) if op is not None else None
    found = re.match(r"No pfor vectorization defined for (\S+)", text)
    if found:
        return no_conversion(where or "op type " + found.group(1))
    if where and re.search(r"[Ss]hape|[Dd]imension|rank|\bdim -?\d", text):
        return (
            f"{where} could not run over a block ({text[:120]}): its values have a shape of "
            "their own in each example (a VarLenFeature, a decoded image of its own size), "
            "which do not stack; a fixed shape there (FixedLenFeature, a resize first) would "
            "let blocks of examples stack"
        )
    return f"{where} could not run over a block: {text[:160]}" if where else text[:160]


def _converting(error: Exception) -> str:
    """The name of the op pfor was converting when `error` was raised (the innermost, where
    conversions nest), as a message would name it, or "": pfor does not say it where a
    converter's result has the wrong shape."""
    found, tb = "", error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_convert_helper":
            op = tb.tb_frame.f_locals.get("y_op")
            if isinstance(op, tf.Operation):
                found = f"<tf.Operation '{op.name}'> "
        tb = tb.tb_next
    return found


def _program_op(message: str) -> Optional[tf.Operation]:
    """The program's op that pfor names in `message`, through the name capture gave its
    copy, or None."""
    for name in re.findall(r"(?:name: \"|<tf\.Operation ')([^\"']+)", message):
        op = captured_graphs.program_op(name)
        if op is not None:
            return op
    return None


def map_blocks(
    dataset: tf.data.Dataset,
    branches: list,
    parallel: dict,
    which: Optional[Callable] = None,
    block: int = BLOCK,
    key: Optional[str] = None,
    fixed: tuple = (),
    example_size: int = 0,
) -> tf.data.Dataset:
    """Examples from `dataset`'s elements, a block at a time; NotVectorized if pfor cannot
    convert them.

    Element `e` becomes the example `branches[which(e)](e)` (`branches[0](e)` without
    `which`, which must work on a whole block at once). The result's elements are the
    examples, in order. A block is split between branches here, not by a cond inside the
    vectorized graph, so that every branch is vectorized in the block's own graph. `key`
    names what `branches[0]` computes, where it is the only branch (tracing.shared_map).
    `fixed`: the positions in the flat element of strings that all have one length (a
    fixed-length reader's records). `example_size`: about how many bytes an example holds
    (`example_bytes`), which bounds the blocks mapped at once.
    """

    def one(element):
        if which is None:
            return branches[0](element)
        return tf.switch_case(
            tf.cast(which(element), tf.int32), [lambda b=b: b(element) for b in branches]
        )

    def block_examples(*elements):
        uniforms: list = []
        if which is None:
            flat = tf.nest.flatten(elements)
            outputs = _vectorized(branches[0], elements, uniforms, [flat[i] for i in fixed])
        else:
            size = tf.shape(elements[0])[0]
            turns = tf.cast(which(elements), tf.int32)
            places = tf.dynamic_partition(tf.range(size), turns, len(branches))
            parts = [
                _vectorized(b, tuple(tf.gather(e, at) for e in elements), uniforms)
                for b, at in zip(branches, places)
            ]
            outputs = tuple(
                tf.dynamic_stitch(places, [part[i] for part in parts]) for i in range(len(parts[0]))
            )
        if not uniforms:
            return outputs
        signature = tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape[1:], t.dtype), outputs)
        return tf.cond(
            tf.reduce_all(tf.stack(uniforms)),
            lambda: outputs,
            # Records of several lengths in this block: one at a time, as before.
            lambda: tf.map_fn(one, tuple(elements), fn_output_signature=signature),
        )

    try:
        shared = f"blocks_{key}_{block}_{fixed}" if key is not None and which is None else None
        blocks = tracing.shared_map(
            dataset_ops.batch(dataset, block),
            shared,
            lambda element: block_examples(
                *(element if isinstance(element, tuple) else (element,))
            ),
            parallel=_in_flight(parallel, block * example_size),
            prune=True,  # What pfor converted stays behind, dead.
            program=True,
        )
    except NotVectorized:
        raise
    except Exception as e:  # pfor has no converter for some op: the per-example map is used.
        raise NotVectorized(_reason(e)) from e
    return dataset_ops.unbatch(blocks)


def _in_flight(parallel: dict, block_bytes: int) -> dict:
    """`parallel` for a map of blocks of `block_bytes` each: the program's `num_threads`
    blocks at once, fewer where they would hold more than `_IN_FLIGHT_BYTES`.

    Legacy's threads each prepared one example, and blocks are smaller than 512 KB but for
    big examples, 16 to a block: cross_conv's `shuffle_batch(num_threads=64)` of sequences
    of frames (98 KB each) had 64 blocks, 100 MB, in flight, all of it in each checkpoint
    (126 MB of input positions, 26 MB one example at a time). Blocks of every size kept to
    2 per core cost CIFAR-10's input (16 blocks of 64 at once) throughput in most runs on
    2 cores: only big blocks are kept fewer.
    """
    calls = parallel.get("num_parallel_calls")
    if not isinstance(calls, int) or calls <= 0 or not block_bytes:
        return parallel  # None, or AUTOTUNE's choice.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    most = max(_IN_FLIGHT_BYTES // block_bytes, 2 * (cores or 1))
    return {**parallel, "num_parallel_calls": min(calls, most)}


def _vectorized(examples: Callable, elements: tuple, uniforms: list, fixed=()) -> tuple:
    with block_converters.converters(uniforms, fixed), tf.name_scope(tracing.EXAMPLE_SCOPE):
        outputs = _over_block(examples, elements)
    graph = tf.compat.v1.get_default_graph()
    if any(u.graph is not graph for u in uniforms):
        # Only the block's own graph can choose the example-at-a-time result.
        raise NotVectorized("decode_raw inside a branch or a loop")
    return tuple(outputs)


def _over_block(examples: Callable, elements: tuple):
    """`tf.vectorized_map(examples, elements)`, for elements of one length (a block's).

    vectorized_map takes each example's view of an element by gathering it at the
    example's index, broadcasting elements of length 1, and pfor keeps that machinery in
    the graph (14 ops an element, and 17 to find the length): every pipeline's iterator
    instantiates them (the CSV tower's function had 41 nodes, now 10). Here the views are
    the elements themselves, as pfor sees them.
    """

    def mapped():  # TensorFlow's own, where pfor's pieces are missing or do not fit.
        return tf.vectorized_map(examples, elements, fallback_to_while_loop=False, warn=False)

    if not hasattr(_pfor, "PFor") or not hasattr(_pfor.PFor, "_add_conversion"):
        return mapped()
    graph = tf.compat.v1.get_default_graph()
    # dimension_value: under V1 TensorShape (TF1 behaviour) shape[0] is a Dimension, never
    # None; handed to PFor as a length it failed every conversion, and each block fell back
    # to the per-example map (500k -> 45k examples/s on CSV).
    length = tf.compat.dimension_value(elements[0].shape[0])
    if length is None:
        length = tf.shape(elements[0], out_type=tf.int32)[0]
    before = set(graph.get_operations())
    with tf.name_scope("loop_body"):
        index = tf.compat.v1.placeholder_with_default(0, shape=[])
        views = tuple(tf.gather(element, index) for element in elements)
        outputs = examples(views)
    flat = tf.nest.flatten(outputs)
    if not all(isinstance(t, tf.Tensor) for t in flat):  # What pfor's own wrapper unpacks.
        return mapped()
    made = set(graph.get_operations()) - before
    with tf.name_scope("pfor"):
        converter = _pfor.PFor(index, length, made, fallback_to_while_loop=False, warn=False)
        for view, element in zip(views, elements):
            converter._add_conversion(view, _pfor.wrap(element, True))
        # Text split into tokens: a ragged block up to a fixed shape, then pfor's.
        split_tokens.convert_splits(converter, made, flat, tf.shape(elements[0])[0])
        return tf.nest.pack_sequence_as(outputs, [converter.convert(t) for t in flat])
