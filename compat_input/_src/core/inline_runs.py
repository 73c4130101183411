"""Which of a graph's functions tf.data may run inline: one op after the other, on the
thread that calls the function.

By default a map's function runs on TensorFlow's executor, which hands ops to the inter-op
thread pool, a thread switch each; with `use_inter_op_parallelism=False` it runs on the
single-threaded executor instead (benchmarks/results/queues.md: CSV rows 1.3x, the tiny
trainer's input 1.2-1.5x, length bucketing 1.4x). That executor refuses v1 control flow
(`Switch`, `Merge`, `Enter`, `Exit`, `NextIteration`: captured `tf.cond`s and loops of TF1
programs), ref-typed edges, send/recv and collective ops, and says so only when the
iterator first calls the function, failing the program's read: a function holding any of
them, or calling one that does, keeps the default executor.
"""

import weakref

import tensorflow as tf

from compat_input._src.core import tf_internals

_REFUSED = frozenset(
    {
        *(kind + op for kind in ("", "Ref") for op in ("Switch", "Merge", "Enter", "Exit")),
        "NextIteration",
        "RefNextIteration",
        "_Send",
        "_Recv",
        "_HostSend",
        "_HostRecv",
    }
)

_known: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # graph -> {name: bool}


def inline_safe(graph: tf.Graph, name: str) -> bool:
    """Whether the function `name` of `graph`'s library, and every function it calls, can
    run on the single-threaded executor."""
    known = _known.setdefault(graph, {})
    if name not in known:
        known[name] = False  # A function that calls itself is not followed again.
        known[name] = _safe(graph, name, known)
    return known[name]


def _safe(graph: tf.Graph, name: str, known: dict) -> bool:
    function = tf_internals.functions_of(graph).get(name)
    definition = getattr(function, "definition", None)
    if definition is None:
        return False
    for node in definition.node_def:
        if node.op in _REFUSED or node.op.startswith("Collective"):
            return False
        op_def = tf_internals.op_def(node.op)
        if op_def is None:  # A call of another function of the library.
            if not inline_safe(graph, node.op):
                return False
        elif any(arg.is_ref for arg in op_def.output_arg):
            return False
        for value in node.attr.values():
            called = [value.func] if value.HasField("func") else list(value.list.func)
            if not all(inline_safe(graph, f.name) for f in called):
                return False
    return True
