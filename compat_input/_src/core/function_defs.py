"""Our traced functions' FunctionDefs, made smaller before they join a graph's library:
identical constants made one, and (for a block's function) the ops nothing uses left out.

A graph's function library costs the session each new set of fetches it runs: its Grappler
item carries every function the graph reaches, whatever the run prunes, and its passes
read them all again, about 20 µs an op on this machine (TensorFlow 2.21: a constant
fetched anew took 1.1 ms beside no function, 7.2 ms beside one of 300 ops). A Supervisor's
start runs about ten new sets, a program's evaluation more. Tracing gives each use of a
shape or an axis a constant of its own: a CIFAR-10 block's function held 249 constants,
62 of them different.
"""

import itertools
import re

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2
from tensorflow.core.framework import function_pb2

from compat_input._src.core import tf_internals


def smaller(concrete, prune: bool = False):
    """`concrete`, or a function of its FunctionDef made smaller (`Defined`); with `prune`,
    less the ops nothing it returns or runs depends on (`_live_ops`)."""
    # A function that captures keeps its every op: its callers pass what it captured.
    reached = _live_ops(concrete.graph) if prune and not concrete.captured_inputs else None
    definition = concrete.function_def
    if reached is not None and len(reached) == len(definition.node_def):
        reached = None
    repeated = _repeated_constants(definition, reached)
    if reached is None and not repeated:
        return concrete
    # Edited in the FunctionDef itself: importing a graph into a new function traced it all
    # again (20 ms of a CIFAR-10 program's build).
    edited = function_pb2.FunctionDef()
    edited.CopyFrom(definition)
    _edit(edited, reached, repeated)
    # Named as TensorFlow names functions, its own number last.
    name = concrete.name.decode()
    edited.signature.name = re.sub(r"(_\d+)?$", r"_live\g<0>", name, count=1)
    name_attrs = attr_value_pb2.NameAttrList()
    name_attrs.CopyFrom(concrete._as_name_attr_list)
    name_attrs.name = edited.signature.name
    function = tf_internals.edited_function(concrete, edited)
    return Defined(function, name_attrs, concrete.captured_inputs, edited)


# One count for every function of ours built without a trace (tracing._built_apart,
# calls.shared_call): one graph's library holds both kinds, and names must not meet.
_numbers = itertools.count()


def unique_name(prefix: str) -> str:
    """`prefix` and a number no other function of ours made in this process has."""
    return f"{prefix}_{next(_numbers)}"


def without_repeated_constants(definition) -> None:
    """Makes identical constants of a FunctionDef one, in place (a function of ours built
    without a trace: tracing._built_apart)."""
    repeated = _repeated_constants(definition)
    if repeated:
        _edit(definition, None, repeated)


def _converted_away(name: str) -> bool:
    """An op of the per-example graph pfor rewrote for a block (vectorize._over_block makes
    them under `loop_body`; what pfor makes from them is under `.../pfor/`)."""
    return "/loop_body/" in name and "/pfor/" not in name


def _live_ops(graph: tf.Graph) -> set:
    """The names of the ops that what `graph` returns or runs depends on.

    pfor leaves the per-example graph it converted in the block's function, dead: a third
    of a CSV example's. Every iterator instantiates the function whole, and each node costs
    every pipeline kilobytes (50 towers: 4 MB for those of the CSV example). Tracing gave
    the function's outputs control edges to the converted stateful ops and to v1 conds'
    Merges among them (automatic control dependencies): kept, they ran one example's graph
    again for every block. Control edges to them are dropped; data edges (ops pfor reuses
    as they are, the same for every example) are kept.
    """
    live = [t.op for t in graph.outputs]
    live += [op for op in graph.control_outputs if not _converted_away(op.name)]
    reached: set = set()
    while live:
        op = live.pop()
        if op.name not in reached:
            reached.add(op.name)
            live += [t.op for t in op.inputs]
            live += [c for c in op.control_inputs if not _converted_away(c.name)]
    return reached


def _constant_key(node):
    """What makes two constants the same value on the same device, or None: a constant
    with inputs (a control edge: a branch's, an ordering) is left as it is."""
    if node.op != "Const" or node.input:
        return None
    attrs = node.attr
    if len(attrs) == 2 and "dtype" in attrs and "value" in attrs:  # Most: nothing else.
        return node.device, attrs["dtype"].type, attrs["value"].SerializeToString()
    return node.device, tuple(sorted((k, v.SerializeToString()) for k, v in attrs.items()))


def _repeated_constants(definition, reached=None) -> dict:
    """`{name: name of the first identical constant}` for each constant made before,
    among the ops `reached` (all where None)."""
    first: dict = {}
    repeated = {}
    for node in definition.node_def:
        if reached is None or node.name in reached:
            key = _constant_key(node)
            if key is not None:
                kept = first.setdefault(key, node.name)
                if kept != node.name:
                    repeated[node.name] = kept
    return repeated


def _edit(definition, reached, repeated: dict) -> None:
    """Leaves out the ops not `reached` (where given) and the `repeated` constants, whose
    users take the first of each instead."""

    def renamed(reference: str) -> str:
        # "name:output:0", "^name", or an argument's name.
        control = reference.startswith("^")
        node, sep, rest = reference.lstrip("^").partition(":")
        node = repeated.get(node, node)
        return ("^" if control else "") + node + sep + rest

    def kept(reference: str) -> bool:  # Control edges to ops left out are dropped.
        return reached is None or not reference.startswith("^") or reference[1:] in reached

    nodes = []
    for node in definition.node_def:
        if (reached is not None and node.name not in reached) or node.name in repeated:
            continue
        inputs = [renamed(i) for i in node.input if kept(i)]
        # A control edge to a constant made one with a data edge's: one edge is enough.
        inputs = [i for n, i in enumerate(inputs) if not i.startswith("^") or i not in inputs[:n]]
        if inputs != list(node.input):
            del node.input[:]
            node.input.extend(inputs)
        nodes.append(node)
    del definition.node_def[:]
    definition.node_def.extend(nodes)
    for key, value in list(definition.ret.items()):
        definition.ret[key] = renamed(value)
    for key, value in list(definition.control_ret.items()):
        if reached is not None and value not in reached:
            del definition.control_ret[key]
        else:
            definition.control_ret[key] = repeated.get(value, value)
    outputs = [o for o in definition.signature.control_output if o in definition.control_ret]
    del definition.signature.control_output[:]
    definition.signature.control_output.extend(outputs)


class Defined:
    """A function made of a FunctionDef of ours (edited here, or built from a plain graph's
    ops: calls.shared_call), as `tracing.attr` hands functions on: added to a graph by
    name, its `definition` where edited here (None else)."""

    def __init__(self, function, name_attrs, captured_inputs=(), definition=None):
        self._function = function
        self._as_name_attr_list = name_attrs
        self.captured_inputs = captured_inputs
        self.definition = definition

    def add_to_graph(self, graph) -> None:
        tf_internals.add_function(graph, self._function)
