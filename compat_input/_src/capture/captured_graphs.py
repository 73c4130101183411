"""Captured graphs as data: the per-example ops between the sources and a batcher, pruned
into a GraphDef of their own (capture.py imports it inside the map function), the
functions they call, and a key that is equal where two captures compute the same from the
same arguments (one tower's decode graph and the next one's), so that their map functions
are traced once (core/tracing.py).
"""

import hashlib

import tensorflow as tf
from tensorflow.core.framework import graph_pb2
from tensorflow.core.framework import node_def_pb2

from compat_input._src.core import tf_internals


def key(graph_def, targets: list, arg_name: dict, flat_index: dict, functions: list):
    """The graph_def with its node names replaced by their positions, what each argument
    placeholder reads, and which tensors are returned: equal where the captures compute the
    same. None where a boundary is not a source element (it would be captured, not passed)."""
    if len(flat_index) != len(arg_name):
        return None
    names = {node.name: f"n{i}" for i, node in enumerate(graph_def.node)}

    def renamed(name: str) -> str:
        control, name = name.startswith("^"), name.lstrip("^")
        op, _, port = name.partition(":")
        return ("^" if control else "") + names.get(op, op) + (f":{port}" if port else "")

    canonical = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    for node in canonical.node:
        node.name = names[node.name]
        inputs = [renamed(i) for i in node.input]
        del node.input[:]
        node.input.extend(inputs)
    digest = hashlib.sha256(canonical.SerializeToString(deterministic=True))
    for name, index in flat_index.items():
        digest.update(f"|{names[arg_name[name]]}={index}".encode())
    for t in targets:
        returned = names[arg_name[t.name]] if t.name in arg_name else renamed(t.name)
        digest.update(f"|out {returned}".encode())
    for name in sorted(f.name if isinstance(f.name, str) else f.name.decode() for f in functions):
        digest.update(f"|{name}".encode())
    return digest.hexdigest()[:24]


def functions_called(graph: tf.Graph, nodes: list) -> list:
    """The graph's functions that `nodes` call, directly or through other functions.

    Only those: the graph also holds every tf.data function of every pipeline, which would
    only weigh down each map function.
    """
    known = tf_internals.functions_of(graph)
    called: dict = {}
    pending = list(nodes)
    while pending:
        node = pending.pop()
        names = [node.op] if node.op in known else []
        for attr in node.attr.values():
            if attr.HasField("func"):
                names.append(attr.func.name)
            elif attr.HasField("list"):
                names.extend(f.name for f in attr.list.func)
        for name in names:
            if name in known and name not in called:
                called[name] = known[name]
                pending.extend(called[name].definition.node_def)
    return list(called.values())


def pruned(graph: tf.Graph, boundary: list, ops: list, arg_name: dict) -> graph_pb2.GraphDef:
    """The GraphDef of `ops` alone, each tensor of `boundary` (a name) replaced by a
    placeholder named `arg_name[name]`, devices and colocations stripped."""
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.CopyFrom(graph.graph_def_versions)
    kept = {op.name for op in ops}
    for name in boundary:
        dtype = graph.get_tensor_by_name(name).dtype.base_dtype
        node = graph_def.node.add(name=arg_name[name], op="Placeholder")
        node.attr["dtype"].type = dtype.as_datatype_enum
    for op in ops:
        node = graph_def.node.add()
        node.CopyFrom(op.node_def)
        _strip(node)
        new_inputs = []
        for inp in node.input:
            if inp.startswith("^"):
                if inp[1:] in kept:
                    new_inputs.append(inp)
                continue
            tensor_name = inp if ":" in inp else f"{inp}:0"
            new_inputs.append(arg_name.get(tensor_name, inp))
        del node.input[:]
        node.input.extend(new_inputs)
    return graph_def


def _strip(node: node_def_pb2.NodeDef) -> None:
    node.device = ""
    if "_class" in node.attr:
        del node.attr["_class"]
