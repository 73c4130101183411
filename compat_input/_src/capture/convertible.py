"""Per-example ops that no block conversion exists for, found without tracing.

pfor converts a per-example graph op by op, from the block's inputs on: an op that takes
what differs between examples, or holds state, needs a converter for its type, and where
there is none (a JPEG decode, a file read, a sparse-to-dense) the whole conversion fails.
Tracing the block's graph and converting it up to that op cost inception's input 0.11 s
of its build for nothing; the types are known before.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src.capture import block_converters
from compat_input._src.capture import op_kinds
from compat_input._src.capture import split_tokens
from compat_input._src.core import tf_internals

# Ops pfor converts by their place in a while loop, not through its registry.
_LOOP = frozenset({"Enter", "Exit", "NextIteration", "LoopCond"})


def unconverted(ops, per_example) -> Optional[tf.Operation]:
    """The first op of `ops` (a captured per-example graph), in the order the program made
    them, that pfor would have to convert and cannot: it takes a value that differs between
    examples (from `per_example`, through data inputs) or holds state, and neither pfor nor
    block_converters.py converts its type. None where there is none, or pfor is missing."""
    if tf_internals.pfor is None or any(op.type in split_tokens.SPLITS for op in ops):
        return None  # A split's tokens are converted op by op by split_tokens.py.
    converted = block_converters.converted_types()
    differs = {t.ref() for t in per_example}
    # Made in this order, an op's data inputs come before it (a loop's back edge aside).
    for op in sorted(ops, key=lambda o: o._id):
        takes = any(t.ref() in differs for t in op.inputs)
        if takes:
            differs.update(t.ref() for t in op.outputs)
        if op.type in converted or op.type in _LOOP or op.type == "Const":
            continue
        if op_kinds.counter_step(op) is not None:
            continue  # A seeded draw, made its stateless twin (random_draws.py).
        if takes or _stateful(op):
            return op
    return None


def _stateful(op: tf.Operation) -> bool:
    """Stateful as pfor counts it (a variable's read is not); an op pfor cannot tell of (a
    call of a function by its name) counts as not: the trace then finds out."""
    try:
        return tf_internals.pfor._is_stateful_pfor_op(op)
    except (AssertionError, AttributeError, ValueError):
        return False
