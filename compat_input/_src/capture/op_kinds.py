"""Op kinds: which stateful ops a per-example graph may hold, and what each allows.

Capturing rebuilds the per-example graph inside tf.data (capture.py); whether its elements
may then be mapped in parallel, or a block of examples at a time (vectorize.py), depends
on the stateful ops in it. The tables below say which are harmless and why.
"""

import functools
from typing import Optional

import tensorflow as tf

from compat_input._src.core import errors
from compat_input._src.core import tf_internals

# Stateful ops that mean the same run once per example or once over a block of them: checks,
# and lookups in tables (vocabularies), which read what was initialized before the input.
_BLOCK_SAFE = frozenset({"Assert", "LookupTableFindV2", "LookupTableSizeV2"})
# Stateful ops that stay correct when elements are mapped in parallel: those above, logging,
# and variable reads. Random ops without a seed are both (see unseeded_random).
_ORDER_FREE = _BLOCK_SAFE | {"Print", "PrintV2", "ReadVariableOp"}
_RANDOM = frozenset(
    {
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "TruncatedNormal",
        "ParameterizedTruncatedNormal",
        "RandomShuffle",
        "RandomGamma",
        "RandomPoissonV2",
        "Multinomial",
        "SampleDistortedBoundingBox",
        "SampleDistortedBoundingBoxV2",
    }
)


def unseeded_random(op: tf.Operation) -> bool:
    """A random op without a seed: its draws were never reproducible in the first place."""
    return op.type in _RANDOM and not (op.get_attr("seed") or op.get_attr("seed2"))


# TensorFlow's stateful random kernels draw from one Philox stream per op (key: the op's
# seed; counter: its seed2 in the high 64 bits), and each call first moves the counter on by
# a fixed amount: 256 per value for the distributions, one per four draws for a shuffle
# (its Fisher-Yates swaps of n items draw n - 1 numbers). Proven bit for bit against the
# kernels, op kind by op kind, in tests/test_random_draws.py.
_COUNTER_STEP = {
    "RandomUniform": lambda shape: shape.num_elements() * 256,
    "RandomUniformInt": lambda shape: shape.num_elements() * 256,
    "RandomStandardNormal": lambda shape: shape.num_elements() * 256,
    "TruncatedNormal": lambda shape: shape.num_elements() * 256,
    "RandomShuffle": lambda shape: (shape.num_elements() + 2) // 4,  # shape: the first axis
}


def counter_step(op: tf.Operation) -> Optional[int]:
    """How far a seeded random op's Philox counter moves each time it runs, where that is
    fixed: then the k-th call's draws are a function of k alone (random_draws.py). None for
    other ops, unseeded ones, and ones that run only in a branch or several times a call."""
    step = _COUNTER_STEP.get(op.type)
    if step is None or unseeded_random(op) or tf_internals.in_control_flow(op):
        return None
    shape = op.outputs[0].shape
    if op.type == "RandomShuffle":
        shape = shape[:1] if shape.rank else tf.TensorShape([1])
    if not shape.is_fully_defined() or shape.num_elements() >= 2**32:
        return None
    return step(shape)


@functools.cache
def _cpu_kernels(op_type: str) -> Optional[tuple]:
    """The type constraints of each CPU kernel of `op_type`, as ((attr, allowed types),
    ...); None where TensorFlow registered no kernel for it at all (a function's call)."""
    registered = tf_internals.kernels.get_registered_kernels_for_op(op_type).kernel
    if not registered:
        return None
    return tuple(
        tuple((c.name, frozenset(c.allowed_values.list.type)) for c in kernel.constraint)
        for kernel in registered
        if kernel.device_type in ("CPU", "DEFAULT")  # DEFAULT: any device's.
    )


def has_cpu_kernel(op: tf.Operation) -> bool:
    """Whether the host CPU, where tf.data runs every input op, can run `op`. Legacy's
    runner ran it where its device scope put it: a GPU-only kernel (a type the CPU kernels
    do not take) ran there, and only there."""
    if tf_internals.has_function(op.graph, op.type):
        return True  # A call of the graph's own function: its ops are checked as they run.
    node = op.node_def
    node.device = "/device:CPU:0"
    # TensorFlow's own kernel lookup for this node (types, labels, defaults): 10 us an op,
    # where reading the registry cost 0.4 ms an op type; only an op it finds no kernel
    # for reads the registry, to tell "none on the CPU" from "none registered".
    if tf_internals.find_kernel_class(node):
        return True
    kernels = _cpu_kernels(op.type)
    if kernels is None:
        return True  # No registry entry: TensorFlow decides as it runs it.

    def allows(name: str, allowed: frozenset) -> bool:
        try:
            value = op.get_attr(name)
        except ValueError:
            return True
        return not isinstance(value, tf.DType) or value.as_datatype_enum in allowed

    return any(all(allows(n, a) for n, a in kernel) for kernel in kernels)


def _stateful(op: tf.Operation) -> bool:
    # Ops on reference variables (CountUpTo, Assign*) change state without being marked
    # stateful: the reference input is their state.
    return op.op_def.is_stateful or any(tf_internals.is_ref_dtype(t.dtype) for t in op.inputs)


def per_example_safe(op: tf.Operation) -> bool:
    """Whether `op` means the same run once per example or once over a block of them."""
    return (
        not _stateful(op)
        or op.type in _BLOCK_SAFE
        or unseeded_random(op)
        or counter_step(op) is not None
    )


def order_sensitive(op: tf.Operation) -> bool:
    """Whether running `op` for several examples at once could change what they get."""
    return (
        _stateful(op)
        and op.type not in _ORDER_FREE
        and not unseeded_random(op)
        and counter_step(op) is None
    )


def why_one_at_a_time(op: tf.Operation) -> str:
    """Why `op` (stateful) keeps its examples one at a time, where the user made it, and
    what would let them go a block at a time: for the run's report."""
    where = errors.described(op)
    if op.type in _COUNTER_STEP and tf_internals.in_control_flow(op):
        return (
            f"seeded {where} draws only when its tf.cond branch or loop runs, so its k-th "
            "draw is not the k-th example's; draw it before the cond and use the value "
            "inside, and blocks of examples draw legacy's numbers"
        )
    if op.type in ("If", "While", "Case", "StatefulPartitionedCall"):
        return (
            f"{where} holds a stateful op in its branches or body (a seeded random op, a "
            "py_func), run only when they run; draw it before the cond and use the value "
            "inside, and blocks of examples draw legacy's numbers"
        )
    if op.type in _COUNTER_STEP:
        return (
            f"seeded {where} draws a shape that changes from example to example, so its "
            "k-th draw depends on the sizes before it; draw a fixed shape and slice it, and "
            "blocks of examples draw legacy's numbers"
        )
    if op.type in _RANDOM:
        return (
            f"seeded {where}: TensorFlow has no stateless kernel that draws what it draws, "
            "so legacy's numbers need one example at a time, in order; without a seed it "
            "would run a block at a time"
        )
    if op.type in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
        return (
            f"{where} runs Python once per example, in order; the same computation in "
            "TensorFlow ops would run a block at a time"
        )
    return (
        f"stateful {where} must run once per example, in order; the rest of the "
        "per-example graph would run a block at a time without it"
    )
