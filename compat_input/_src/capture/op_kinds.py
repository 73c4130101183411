"""Op kinds: which stateful ops a per-example graph may hold, and what each allows.

Capturing rebuilds the per-example graph inside tf.data (capture.py); whether its elements
may then be mapped in parallel, or a block of examples at a time (vectorize.py), depends
on the stateful ops in it. The tables below say which are harmless and why.
"""

import tensorflow as tf

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


def _stateful(op: tf.Operation) -> bool:
    # Ops on reference variables (CountUpTo, Assign*) change state without being marked
    # stateful: the reference input is their state.
    return op.op_def.is_stateful or any(tf_internals.is_ref_dtype(t.dtype) for t in op.inputs)


def per_example_safe(op: tf.Operation) -> bool:
    """Whether `op` means the same run once per example or once over a block of them."""
    return not _stateful(op) or op.type in _BLOCK_SAFE or unseeded_random(op)


def order_sensitive(op: tf.Operation) -> bool:
    """Whether running `op` for several examples at once could change what they get."""
    return _stateful(op) and op.type not in _ORDER_FREE and not unseeded_random(op)
