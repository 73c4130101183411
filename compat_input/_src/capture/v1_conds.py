"""v1 conds over a block: pfor converters for `Switch` and `Merge`, the ops `tf.cond` and
slim's `apply_with_random_selector` make in TF1 behaviour (`random_flip_left_right` holds
one). pfor converts only TF2's `If` op; block_converters.py registers these while our own
graphs are converted.

Where the predicate differs between the examples of a block, both branches run for every
example and each example keeps its own branch's rows, but only where every op in the
branches gives a value for any input and fails for none (`_TOTAL`): legacy ran only the
branch taken. Where it is the same for the block, a real Switch switches the block whole.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src.capture import op_kinds
from compat_input._src.core import tf_internals

_pfor = tf_internals.pfor


# Ops that give every example a value and fail for none, whatever the values (floating
# point for the divisions): a v1 cond whose branches hold only these may run both branches
# for every example of a block, and pick each example's result.
_TOTAL = frozenset(
    {
        *("Identity", "Const", "NoOp", "StopGradient", "Snapshot", "Switch", "Merge"),
        *("ReverseV2", "Transpose", "ExpandDims", "Cast", "Shape", "Rank", "Size"),
        *("Add", "AddV2", "Sub", "Mul", "Neg", "Abs", "Square", "Maximum", "Minimum"),
        *("ClipByValue", "Floor", "Ceil", "Round", "Sqrt", "Rsqrt", "Exp", "Log", "Tanh"),
        *("Sigmoid", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual"),
        *("LogicalAnd", "LogicalOr", "LogicalNot", "Select", "SelectV2", "ZerosLike"),
        *("OnesLike", "AdjustContrastv2", "AdjustSaturation", "AdjustHue", "RGBToHSV"),
        *("HSVToRGB", "RealDiv", "Div"),
    }
)


def _total(op: tf.Operation) -> bool:
    if op.type in ("RealDiv", "Div"):
        return op.outputs[0].dtype.is_floating
    # An unseeded random op drawing for an example that does not take its branch changes
    # nothing a program could see: its draws were never reproducible (op_kinds.py).
    return op.type in _TOTAL or op_kinds.unseeded_random(op)


class _Deadness:
    """Which tensors of a v1 cond's graph are dead when one Switch output is (TensorFlow's
    rule: an op is dead when any input is, a Merge when all of its inputs are)."""

    def __init__(self, switch: tf.Operation, index: int):
        self.switch, self.index = switch, index
        self._ops: dict = {}

    def tensor(self, t: tf.Tensor) -> bool:
        if t.op is self.switch:
            return t.value_index == self.index
        return self.op(t.op)

    def op(self, op: tf.Operation) -> bool:
        if op not in self._ops:
            self._ops[op] = False  # Cycles (v1 while loops) end here.
            if op.type == "Merge":
                dead = all(self.tensor(t) for t in op.inputs)
            else:
                dead = any(self.tensor(t) for t in op.inputs) or any(
                    self.op(c) for c in op.control_inputs
                )
            self._ops[op] = dead
        return self._ops[op]

    def branch(self) -> set:
        """The ops that run only where this output is live: the branch it opens."""
        found: set = set()
        frontier = [c for c in self.switch.outputs[self.index].consumers()]
        while frontier:
            op = frontier.pop()
            if op in found or not self.op(op):
                continue
            found.add(op)
            frontier.extend(c for t in op.outputs for c in t.consumers())
            frontier.extend(op._control_outputs)
        return found


# Ops whose result differs between examples wherever an input does, whatever pfor makes
# of them: the predicates of a DatasetDataProvider's `case` (a parsed format, compared,
# stacked, counted) reach their Switch through these.
_PER_EXAMPLE = frozenset(
    {
        *("Identity", "Cast", "Equal", "NotEqual", "Less", "LessEqual", "Greater"),
        *("GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "Pack", "Sum", "All"),
        *("Any", "Reshape", "ParseExampleV2", "ParseSingleExample", "StringToNumber"),
    }
)


def unconvertible(ops, per_example) -> Optional[tf.Operation]:
    """A Switch of `ops` (a captured per-example graph) that `switch` would refuse, found
    without tracing: its predicate differs between examples (it takes `per_example`, the
    tensors each example brings, through `_PER_EXAMPLE` ops alone) and a branch holds an op
    that is not `_TOTAL`. Tracing the block and converting up to it cost tf_slim's
    image programs 37-44 ms of their build (their decoder's `case`), for nothing.
    """
    ops = set(ops)
    per_example = {t.ref() for t in per_example}
    known: dict = {}

    def differs(t: tf.Tensor) -> bool:
        if t.ref() in per_example:
            return True
        pending = [t]
        while pending:  # Inputs first, without recursion: a long chain of ops is fine.
            top = pending[-1]
            if top.ref() in known or top.ref() in per_example:
                pending.pop()
                continue
            op = top.op
            if op not in ops or op.type not in _PER_EXAMPLE:
                known[top.ref()] = False
                pending.pop()
                continue
            todo = [i for i in op.inputs if i.ref() not in known and i.ref() not in per_example]
            if todo:
                pending.extend(todo)
                continue
            known[top.ref()] = any(i.ref() in per_example or known[i.ref()] for i in op.inputs)
            pending.pop()
        return known[t.ref()]

    for op in sorted(ops, key=lambda o: o.name):
        if op.type != "Switch" or not differs(_through_identities(op.inputs[1])):
            continue
        for index in (0, 1):
            if any(not _total(o) for o in _Deadness(op, index).branch()):
                return op
    return None


def switch(pfor_input):
    """A v1 cond's Switch over a block: a predicate that differs between examples sends
    the whole block down both branches (when they hold only `_TOTAL` ops); one the same
    for the block switches it whole, as for one example."""
    op = pfor_input.op
    data, data_stacked, _ = pfor_input.input(0)
    pred, pred_stacked, _ = pfor_input.input(1)
    if not pred_stacked:
        types = [t.dtype for t in op.outputs]
        outputs = _pfor._create_op("Switch", [data, pred], types, attrs=op.node_def.attr).outputs
        return [_pfor.wrap(t, data_stacked) for t in outputs]
    for index in (0, 1):
        unsafe = [o for o in _Deadness(op, index).branch() if not _total(o)]
        if unsafe:
            raise ValueError(
                f"No pfor vectorization defined for a cond whose branch holds {unsafe[0].type}"
            )
    return [_pfor.wrap(data, data_stacked)] * 2


def merge(pfor_input):
    """A v1 cond's Merge over a block: each example's result from the branch it took.

    Each input of the Merge lives where one predicate has one value (a two-way `tf.cond`:
    one predicate, both values; slim's `apply_with_random_selector`: one `sel == case`
    predicate an input); the example takes the input that lives for it.
    """
    op = pfor_input.op
    lives: dict = {i: set() for i in range(len(op.inputs))}  # input -> {(pred, value)}
    for switch in _switches_before(op):
        pred = _through_identities(switch.inputs[1])
        deadness = [_Deadness(switch, 0), _Deadness(switch, 1)]  # Each output dead.
        for position, t in enumerate(op.inputs):
            dead = [d.tensor(t) for d in deadness]
            if dead[0] != dead[1]:  # Live only where pred == the output that kills it.
                lives[position].add((pred.ref(), dead.index(True)))
    if not all(len(conditions) == 1 for conditions in lives.values()):
        raise ValueError("No pfor vectorization defined for a Merge outside a cond")
    conditions = [next(iter(lives[i])) for i in range(len(op.inputs))]
    preds = [pfor_input.pfor._conversion_map[ref.deref()] for ref, _ in conditions]
    pfor_input.stack_inputs()  # A value the same for every example, tiled.
    values = [pfor_input.input(i)[0] for i in range(len(op.inputs))]
    if not any(pred.is_stacked for pred in preds):  # One branch for the whole block.
        types = [t.dtype for t in op.outputs]
        outputs = _pfor._create_op("Merge", values, types, attrs=op.node_def.attr).outputs
        return [_pfor.wrap(outputs[0], True), _pfor.wrap(outputs[1], False)]
    if not all(pred.is_stacked for pred in preds):
        raise ValueError("No pfor vectorization defined for a Merge of mixed predicates")
    chosen, index = values[0], tf.zeros_like(preds[0].t, tf.int32)
    for position in range(1, len(values)):
        (_, value), pred = conditions[position], preds[position].t
        live = pred if value == 1 else tf.logical_not(pred)
        # Select picks whole rows by a vector predicate; SelectV2 broadcasting it over
        # each example cost 10 us an image (the TF1 image pipelines ran 25% slower).
        chosen = tf.compat.v1.where(live, values[position], chosen)  # The Select op.
        index = tf.compat.v1.where(live, tf.fill(tf.shape(index), position), index)
    return [_pfor.wrap(chosen, True), _pfor.wrap(index, True)]


def _through_identities(t: tf.Tensor) -> tf.Tensor:
    # A cond's data Switches read its predicate through an Identity (`pred_id`).
    while t.op.type == "Identity":
        t = t.op.inputs[0]
    return t


def _switches_before(op: tf.Operation) -> list:
    found, seen, frontier = [], set(), list(op.inputs)
    while frontier:
        producer = frontier.pop().op
        if producer in seen:
            continue
        seen.add(producer)
        if producer.type == "Switch":
            found.append(producer)
        frontier.extend(producer.inputs)
        frontier.extend(t for c in producer.control_inputs for t in c.outputs[:1])
    return found
