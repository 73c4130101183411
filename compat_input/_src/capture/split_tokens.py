"""Text split into tokens, a block at a time (vectorize.py, before pfor converts the rest).

pfor stacks what each example computes into one tensor of the block; the tokens of a
`tf.string_split` / `tf.strings.split` are of a number of their own in each example and
do not stack, so pfor has no conversion for the split and a text reader's batcher ran one
example at a time. Here a split runs once on the whole block, and its tokens stay one flat
vector with each token's example beside it (a ragged block), through the ops that work
token by token (`string_to_number`, lookups, hashing, casts, arithmetic with a constant,
`words[:n]`), up to the first result of a fixed shape in each example: the token count
(`tf.size`, `tf.shape`), or the tokens padded and cut to a fixed length (`tf.pad(ids,
[[0, n]])[:n]`). That result is stacked for the block and handed to pfor as each example's
value; pfor converts the rest of the graph. Every example's values are the ones it computed
alone: each token is computed by the same op on the same string, in the same order.

Any other use of the tokens (their sparse indices, a reshape, an op not listed) leaves the
split to pfor, which has no conversion for it: the batcher then runs one example at a time,
as before, and says which op stopped it.
"""

import tensorflow as tf

from compat_input._src.capture import captured_graphs
from compat_input._src.core import tf_internals

SPLITS = {"StringSplit", "StringSplitV2"}
# Ops computing each output element from the element of the tokens at the same place,
# with every other input the same for all examples (a table, a default, a constant).
_TOKENWISE = {
    "Identity", "Cast", "StringToNumber", "StringLower", "StringUpper", "StringStrip",
    "RegexReplace", "StaticRegexReplace", "StringLength", "AsString",
    "StringToHashBucket", "StringToHashBucketFast", "StringToHashBucketStrong",
    "LookupTableFindV2", "LookupTableFind", "Abs", "Neg", "Sign", "Square", "Log1p",
    "Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Maximum",
    "Minimum", "Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
    "LogicalAnd", "LogicalOr", "LogicalNot",
}  # fmt: skip


# Reductions over all of an example's tokens, as segment reductions over a block's (an
# empty example: 0, 1, the type's lowest or highest, and for floats -inf or inf).
_REDUCTIONS = {
    "Sum": tf.math.unsorted_segment_sum,
    "Prod": tf.math.unsorted_segment_prod,
    "Max": tf.math.unsorted_segment_max,
    "Min": tf.math.unsorted_segment_min,
}


def _over_the_tokens(op: tf.Operation) -> bool:
    axes = tf.get_static_value(op.inputs[1])
    return axes is not None and set(axes.reshape(-1).tolist()) in ({0}, {-1})


class NotTokenwise(Exception):
    """A use of a split's tokens this module does not convert: `op` (ours, the captured
    copy of the program's) and `why`."""

    def __init__(self, op: tf.Operation, why: str):
        super().__init__(f"{op.type} '{op.name}' {why}")
        self.op, self.why = op, why


class _Tokens:
    """A block's tokens: `values` (flat) and `rows` (int64, each token's example)."""

    def __init__(self, values: tf.Tensor, rows: tf.Tensor, padded=None):
        self.values, self.rows = values, rows
        # (count, value) of `tf.pad(tokens, [[0, count]], constant_values=value)`.
        self.padded = padded

    def counts(self, examples: tf.Tensor) -> tf.Tensor:
        """Each example's number of tokens (int64), padding left out."""
        return tf.math.unsorted_segment_sum(tf.ones_like(self.rows), self.rows, examples)


def _hand_to_pfor(converter, tensor: tf.Tensor, stacked: tf.Tensor) -> None:
    """pfor takes `stacked` as every example's `tensor`, and converts on from there."""
    converter._add_conversion(tensor, tf_internals.pfor.wrap(stacked, True))


def _again(op: tf.Operation, inputs: list) -> tf.Operation:
    """`op` made again, its attrs as they are, on the block's `inputs`."""
    attrs = {name: op.node_def.attr[name] for name in op.node_def.attr}
    name = f"{op.name.rpartition('/')[2]}_block"
    return tf_internals.create_op(
        tf.compat.v1.get_default_graph(), op.type, inputs, attrs, name, op.op_def
    )


def convert_splits(converter, made: set, outputs: list, examples: tf.Tensor) -> None:
    """Converts the splits among `made` (the per-example ops) that `outputs` depend on, up
    to results of a fixed shape per example, which pfor then takes (`converter`'s
    conversions). `examples`: the block's length."""
    graph = tf.compat.v1.get_default_graph()
    needed = _needed(made, outputs)
    order = [op for op in graph.get_operations() if op in needed]
    if not any(op.type in SPLITS for op in order):
        return
    rows_count = tf.cast(examples, tf.int64)
    tokens: dict = {}  # By `Tensor.ref()`: tensors are unhashable in TF2 behaviour.
    for op in order:
        if tf_internals.in_control_flow(op) and (
            op.type in SPLITS or any(t.ref() in tokens for t in op.inputs)
        ):
            # A branch or loop runs for some examples of a block, or several times: pfor's
            # conversions of it take its own examples, not the block's.
            raise NotTokenwise(op, "works on tokens in a tf.cond branch or a loop")
        if op.type in SPLITS and op.outputs[1].ref() not in tokens:
            _split(converter, op, tokens, needed)
            continue
        ragged = [t for t in op.inputs if t.ref() in tokens]
        if ragged:
            try:
                _consume(converter, op, ragged[0], tokens, rows_count)
            except NotTokenwise:
                # Tokens of a count the program fixed are stacked for pfor, whatever uses them.
                if not all(_fixed_count(converter, t, tokens, rows_count) for t in ragged):
                    raise
    for output in outputs:
        if output.ref() in tokens and not _fixed_count(converter, output, tokens, rows_count):
            raise NotTokenwise(output.op, "hands on the tokens themselves")


def _fixed_count(converter, tensor: tf.Tensor, tokens: dict, rows_count) -> bool:
    """Hands pfor the tokens `tensor` stacked, where the program fixed their count
    (`set_shape([n])`: a line of n numbers). Each example's count is checked, as legacy's
    queue checked the shape of what it took; False where the count is not fixed."""
    block = tokens[tensor.ref()]
    shape = _declared_shape(tensor)
    if block.padded is not None or not shape.is_fully_defined():
        return False
    count = shape[0]
    counts = block.counts(rows_count)
    check = tf.debugging.assert_equal(
        counts, tf.cast(count, counts.dtype), message=f"{tensor.name}: {count} tokens expected"
    )
    with tf.control_dependencies([check]):
        stacked = tf.reshape(block.values, [-1, count])
    _hand_to_pfor(converter, tensor, stacked)
    del tokens[tensor.ref()]  # What takes it from here is pfor's.
    return True


def _declared_shape(tensor: tf.Tensor) -> tf.TensorShape:
    """`tensor`'s shape, with what the program declared of its own tensor (`set_shape`),
    which the captured copy does not keep."""
    theirs = captured_graphs.program_op(tensor.op.name)
    try:
        return tensor.shape.merge_with(theirs.outputs[tensor.value_index].shape)
    except (AttributeError, IndexError, ValueError):
        return tensor.shape  # Not a copy of the program's: what its graph says.


def _needed(made: set, outputs: list) -> set:
    needed: set = set()
    stack = [t.op for t in outputs]
    while stack:
        op = stack.pop()
        if op in made and op not in needed:
            needed.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return needed


def _split(converter, op: tf.Operation, tokens: dict, needed: set) -> None:
    text, delimiter = op.inputs
    if text.shape.rank != 1 or not text.shape.is_fully_defined():
        raise NotTokenwise(op, f"splits text of shape {text.shape}")
    if any(c in needed for t in (op.outputs[0], op.outputs[2]) for c in t.consumers()):
        raise NotTokenwise(op, "has its sparse indices used")
    per_example = text.shape[0]
    split = _again(op, [tf.reshape(converter.convert(text), [-1]), delimiter])
    rows = split.outputs[0][:, 0]
    if per_example != 1:
        rows = rows // per_example
    tokens[op.outputs[1].ref()] = _Tokens(split.outputs[1], rows)


def _consume(converter, op, ragged, tokens: dict, rows_count) -> None:
    """The block's value of `op`'s output, `op` having the tokens `ragged` as an input."""
    block = tokens[ragged.ref()]
    others = [t for t in op.inputs if t is not ragged]
    if op.type == "Size" or op.type == "Shape":
        count = block.counts(rows_count) + (block.padded[0] if block.padded else 0)
        count = tf.cast(count, op.outputs[0].dtype)
        _hand_to_pfor(converter, op.outputs[0], count if op.type == "Size" else count[:, None])
        return
    if block.padded is None and op.type == "EnsureShape":
        # The same tokens, their count declared where it is fully defined (`_fixed_count`).
        tokens[op.outputs[0].ref()] = block
        return
    if block.padded is None and op.type in ("Pad", "PadV2"):
        paddings = tf.get_static_value(op.inputs[1])
        # Pad's value is the type's zero ("" for strings); PadV2's, the one given.
        value = tf.get_static_value(op.inputs[2]) if op.type == "PadV2" else 0
        if paddings is None or paddings.shape != (1, 2) or paddings[0, 0] != 0 or value is None:
            raise NotTokenwise(op, f"pads the tokens by {paddings}")
        if op.type == "Pad":
            value = tf.zeros([], block.values.dtype)
        tokens[op.outputs[0].ref()] = _Tokens(
            block.values, block.rows, (int(paddings[0, 1]), value)
        )
        return
    if op.type == "StridedSlice":
        _slice(converter, op, block, tokens, rows_count)
        return
    if block.padded is None and op.type in _REDUCTIONS and _over_the_tokens(op):
        if op.type in ("Sum", "Prod") and not op.outputs[0].dtype.is_integer:
            raise NotTokenwise(op, "sums floats, whose order a block would change")
        stacked = _REDUCTIONS[op.type](block.values, block.rows, rows_count)
        if op.type in ("Max", "Min") and stacked.dtype.is_floating:
            # An empty example's float max is -inf (min: inf), a segment's the lowest finite.
            empty = tf.constant(float("-inf") if op.type == "Max" else float("inf"), stacked.dtype)
            stacked = tf.where(block.counts(rows_count) > 0, stacked, empty)
        if op.get_attr("keep_dims"):
            stacked = tf.expand_dims(stacked, -1)
        _hand_to_pfor(converter, op.outputs[0], stacked)
        return
    if block.padded is None and op.type in _TOKENWISE and len(op.outputs) == 1:
        if any(_varies(converter, t) or t.shape.rank not in (0, None) for t in others):
            if op.type not in ("LookupTableFindV2", "LookupTableFind"):
                raise NotTokenwise(op, "takes the tokens with another per-example value")
        made = _again(op, [block.values if t is ragged else t for t in op.inputs])
        tokens[op.outputs[0].ref()] = _Tokens(made.outputs[0], block.rows)
        return
    raise NotTokenwise(op, "has no conversion on the tokens of a split")


def _varies(converter, tensor: tf.Tensor) -> bool:
    """Whether `tensor` differs between the examples of a block (pfor's own answer)."""
    return converter._convert_helper(tensor).is_stacked


def _slice(converter, op, block: _Tokens, tokens: dict, rows_count) -> None:
    """`tokens[i]`, `tokens[a:]`, `tokens[:b]`, `tokens[a:b]` (a, b, i fixed, not negative)."""
    begin, end, strides = (tf.get_static_value(t) for t in op.inputs[1:])
    begin_mask, end_mask, shrink = (
        op.get_attr(f"{m}_mask") for m in ("begin", "end", "shrink_axis")
    )
    fixed = begin is not None and end is not None and strides is not None
    if (
        not fixed
        or list(strides) != [1]
        or op.get_attr("ellipsis_mask")
        or op.get_attr("new_axis_mask")
    ):
        raise NotTokenwise(op, "slices the tokens by what differs per example, or by steps")
    first = 0 if begin_mask & 1 else int(begin[0])
    last = None if end_mask & 1 else int(end[0])
    if first < 0 or (last is not None and last < 0):
        raise NotTokenwise(op, "slices the tokens from their end")
    ragged = tf.RaggedTensor.from_value_rowids(block.values, block.rows, nrows=rows_count)
    if block.padded is not None:
        if first != 0 or shrink or last is None or block.padded[0] < last:
            raise NotTokenwise(op, f"slices tokens padded by {block.padded[0]} other than [:n]")
        stacked = ragged.to_tensor(
            default_value=tf.convert_to_tensor(block.padded[1], block.values.dtype),
            shape=[None, last],
        )
    elif shrink & 1:
        # Token `first` of each example; an example with fewer fails, as its slice did.
        check = tf.debugging.assert_greater(
            ragged.row_lengths(),
            tf.constant(first, tf.int64),
            message=f"{op.name}: no token {first}",
        )
        with tf.control_dependencies([check]):
            stacked = tf.gather(block.values, ragged.row_starts() + first)
    else:
        cut = ragged[:, first:last]
        tokens[op.outputs[0].ref()] = _Tokens(cut.values, cut.value_rowids())
        return
    _hand_to_pfor(converter, op.outputs[0], stacked)
