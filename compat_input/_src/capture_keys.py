"""Keys of captured graphs: equal where two captures compute the same from the same
arguments (one tower's decode graph and the next one's), so that their map functions are
traced once (tracing.py)."""

import hashlib

from tensorflow.core.framework import graph_pb2


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
