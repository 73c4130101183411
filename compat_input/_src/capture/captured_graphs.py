"""Captured graphs as data: the per-example ops between the sources and a batcher, pruned
into a GraphDef of their own (capture.py imports it inside the map function), the
functions they call, and a key that is equal where two captures compute the same from the
same arguments (one tower's decode graph and the next one's), so that their map functions
are traced once (core/tracing.py).
"""

import functools
import hashlib
import re
from typing import Optional

import tensorflow as tf
from tensorflow.core.framework import graph_pb2
from tensorflow.core.framework import node_def_pb2
from tensorflow.core.protobuf import config_pb2
from tensorflow.core.protobuf import meta_graph_pb2
from tensorflow.core.protobuf import rewriter_config_pb2

from compat_input._src.core import tf_internals
from compat_input._src.core import tracing


def key(graph_def, targets: list, arg_name: dict, flat_index: dict, functions: list):
    """The graph_def with its node names replaced by their positions, what each argument
    placeholder reads, and which tensors are returned: equal where the captures compute the
    same. None where a boundary is not a source element (it would be captured, not passed)."""
    if len(flat_index) != len(arg_name):
        return None
    names = {node.name: f"n{i}" for i, node in enumerate(graph_def.node)}
    canonical = _renamed_graph(graph_def, names)
    digest = hashlib.sha256(canonical.SerializeToString(deterministic=True))
    for name, index in flat_index.items():
        digest.update(f"|{names[arg_name[name]]}={index}".encode())
    for t in targets:  # Tensor names, as the graph_def now names them.
        returned = names[arg_name[t]] if t in arg_name else _renamed_input(t, names)
        digest.update(f"|out {returned}".encode())
    for name in sorted(f.name if isinstance(f.name, str) else f.name.decode() for f in functions):
        digest.update(f"|{name}".encode())
    return digest.hexdigest()[:24]


def _renamed_input(name: str, names: dict) -> str:
    """A NodeDef input (`op`, `op:port`, `^op`) with its op renamed by `names` where named."""
    control, name = name.startswith("^"), name.lstrip("^")
    op, _, port = name.partition(":")
    return ("^" if control else "") + names.get(op, op) + (f":{port}" if port else "")


def _renamed_graph(graph_def, names: dict):
    """A copy of `graph_def` with its nodes renamed by `names` where named."""
    renamed = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
    for node in renamed.node:
        node.name = names.get(node.name, node.name)
        inputs = [_renamed_input(i, names) for i in node.input]
        del node.input[:]
        node.input.extend(inputs)
    return renamed


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
    placeholder named `arg_name[name]` of its type and static shape, devices and
    colocations stripped."""
    graph_def = graph_pb2.GraphDef()
    graph_def.versions.CopyFrom(graph.graph_def_versions)
    kept = {op.name for op in ops}
    for name in boundary:
        tensor = graph.get_tensor_by_name(name)
        node = graph_def.node.add(name=arg_name[name], op="Placeholder")
        node.attr["dtype"].type = tensor.dtype.base_dtype.as_datatype_enum
        node.attr["shape"].shape.CopyFrom(tensor.shape.as_proto())
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


# The rewrites of a session's default Grappler config that change what floats come out:
# constant folding (`x / c` becomes `x * (1 / c)`) and the arithmetic optimizer (a sum
# regrouped, broadcast terms last). The rest (pruning, layout, fusions, memory) changes no
# value, and fused ops would only keep pfor from converting the graph.
_NUMERIC_REWRITES = ("constant_folding", "arithmetic_optimization")
_OFF = rewriter_config_pb2.RewriterConfig.OFF


@functools.cache
def _rewrites() -> config_pb2.ConfigProto:
    config = config_pb2.ConfigProto()
    rewrites = config.graph_options.rewrite_options
    for field in rewriter_config_pb2.RewriterConfig.DESCRIPTOR.fields:
        if field.enum_type is not None and field.enum_type.name == "Toggle":
            if field.name not in _NUMERIC_REWRITES:
                setattr(rewrites, field.name, _OFF)
    rewrites.min_graph_nodes = -1  # Ours is a part of the session's graph: never too small.
    return config


def _computes_inexact(graph_def) -> bool:
    """Whether any node has a floating-point or complex type among its attributes: the
    only values the numeric rewrites can change (integer sums regrouped wrap alike)."""
    for node in graph_def.node:
        for attr in node.attr.values():
            types = [attr.type] if attr.HasField("type") else list(attr.list.type)
            if any(_inexact(t) for t in types):
                return True
    return False


def _inexact(enum: int) -> bool:
    dtype = tf.dtypes.as_dtype(enum)
    return dtype.is_floating or dtype.is_complex


def as_the_session_computes(graph_def, tensors: dict, functions: list) -> tuple:
    """`(graph_def rewritten as a session's Grappler rewrites it, {name: new name})`: it
    computes what the same ops computed in the legacy session, bit for bit.

    A tf.data function is not rewritten as a session's graph is (no constant folding; a sum
    regrouped only where its shapes are known, which a block's are not): `x / 255.0` gave
    one ulp more or less on half the values. Rewritten once here, as the session would,
    the graph is what tf.data then runs, example by example or a block at a time.
    `tensors`: what must stay (arguments, outputs), name to dtype. Each is read through an
    Identity, as the legacy enqueue op read the outputs, so that the rewrites may replace
    the op that makes it (a rewritten sum, a folded constant): the second value names that
    Identity, which the rewritten graph keeps. Placeholders stay what they are.
    """
    if not functions and not _computes_inexact(graph_def):
        # Only floats come out otherwise: a Grappler run was 4 ms of each tower's 27 ms.
        return graph_def, {name: name for name in tensors}
    # Rewritten with its nodes named by position, once for every capture that computes the
    # same: youtube-8m's four readers parse alike, and each Grappler run was 16 ms of their
    # join's build. The rewrite's names are then the capture's own again. Seeds too are left
    # out, and given back after: the rewrites keep a stateful op as it is, and a seeded
    # program's copies differ only there (facenet's four preprocessing threads: 37 ms each).
    names = {node.name: f"n{i}" for i, node in enumerate(graph_def.node)}
    canonical = _renamed_graph(graph_def, names)
    own = _own_attrs_cleared(canonical)
    kept = {_renamed_input(name, names): dtype for name, dtype in tensors.items()}
    digest = hashlib.sha256(canonical.SerializeToString(deterministic=True))
    digest.update(repr(sorted((n, d.name) for n, d in kept.items())).encode())
    for function in functions:
        digest.update(function.definition.SerializeToString(deterministic=True))
    found = _REWRITES.get(digest.digest())
    if found is None:
        found = _REWRITES[digest.digest()] = _rewritten(canonical, kept, functions)
        while len(_REWRITES) > _REWRITES_KEPT:
            del _REWRITES[next(iter(_REWRITES))]
    rewritten, renamed = found
    actual = {position: name for name, position in names.items()}
    rewritten = _renamed_graph(rewritten, actual)
    for node in rewritten.node:
        for attr, value in own.get(names.get(node.name), {}).items():
            node.attr[attr].CopyFrom(value)
    return rewritten, {
        name: _renamed_input(renamed[_renamed_input(name, names)], actual) for name in tensors
    }


def _own_attrs_cleared(graph_def) -> dict:
    """`{node name: {attr: value}}` of what only tells one copy's stateful ops from
    another's (a random op's seeds, a `py_func`'s token, an assertion's messages, which
    name the program's tensors), cleared in `graph_def` (a message: its node's name)."""
    messages = _assert_messages(graph_def)
    own = {}
    for node in graph_def.node:
        names = ("seed", "seed2") if "seed2" in node.attr else ()
        names = ("token",) if node.op in ("PyFunc", "EagerPyFunc") else names
        names = ("value",) if node.name in messages else names
        if names:
            own[node.name] = {a: node.attr[a].__deepcopy__() for a in names}
            for attr in names:
                node.attr[attr].Clear()
        if node.name in messages:  # Unlike any other message: no rewrite merges the two.
            node.attr["value"].tensor.dtype = tf.string.as_datatype_enum
            node.attr["value"].tensor.string_val.append(node.name.encode())
    return own


def _assert_messages(graph_def) -> set:
    """The string constants of `graph_def` that only assertions read."""
    readers: dict = {}
    for node in graph_def.node:
        for name in node.input:
            readers.setdefault(name.lstrip("^").partition(":")[0], set()).add(node.op)
    return {
        node.name
        for node in graph_def.node
        if node.op == "Const"
        and node.attr["dtype"].type == tf.string.as_datatype_enum
        and readers.get(node.name) == {"Assert"}
    }


# Rewrites by digest of what was rewritten, the most recent few (a process builds a handful
# of input graphs; towers and joined readers repeat theirs).
_REWRITES: dict = {}
_REWRITES_KEPT = 64


def _rewritten(graph_def, tensors: dict, functions: list) -> tuple:
    """`as_the_session_computes` of a graph_def, run by Grappler."""
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(graph_def)
    keepers = {}
    for k, (name, dtype) in enumerate(tensors.items()):
        keeper = meta.graph_def.node.add(name=f"compat_input_keep_{k}", op="Identity")
        keeper.input.append(name)
        keeper.attr["T"].type = dtype.as_datatype_enum
        keepers[keeper.name] = name
    for function in functions:
        meta.graph_def.library.function.add().CopyFrom(function.definition)
    meta.collection_def["train_op"].node_list.value.extend(keepers)
    try:
        optimized = tf_internals.optimize_graph(_rewrites(), meta)
    except Exception:  # noqa: BLE001 - Grappler's own failure: the graph as it was runs.
        return graph_def, {name: name for name in tensors}
    # The program's own function objects are added to the map's graph (capture.py).
    optimized.ClearField("library")
    placeholders = {n.name for n in optimized.node if n.op == "Placeholder"}
    renamed = {}
    nodes = []
    for node in optimized.node:
        name = keepers.get(node.name)
        if name is not None and name.partition(":")[0] in placeholders:
            renamed[name] = name
        else:
            nodes.append(node)
            if name is not None:
                renamed[name] = f"{node.name}:0"
    del optimized.node[:]
    optimized.node.extend(nodes)
    return optimized, renamed


def program_op(name: str) -> Optional[tf.Operation]:
    """The program's op of which the op `name` is capture's copy (`.../captured/<program's
    name>`, in a function or not), or None: not a copy, or an op the session's rewrites
    made (`as_the_session_computes`)."""
    found = re.search(r"(?:^|/)captured(?:_\d+)?/(.+)$", name)
    if found is None:
        return None
    try:
        return tracing.outermost(tf.compat.v1.get_default_graph()).get_operation_by_name(
            found.group(1)
        )
    except KeyError:
        return None
