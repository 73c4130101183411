"""Room: `range_input_producer(limit, ...).dequeue()`, one index a run (the PTB language
model's producer), in any expression:

    i = tf.train.range_input_producer(epoch_size, shuffle=False).dequeue()

becomes a one-shot iterator's `get_next()` over `Dataset.range(limit)` (shuffled each
epoch where legacy shuffled, repeated `num_epochs` times), as int32 like legacy's.
"""

import libcst as cst

from . import syntax
from .syntax import NotThisPattern

ARGS = ("limit", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name")


class IndexProducer:
    def recognize(self, ctx, call: cst.Call):
        """The producer's arguments when `call` is `range_input_producer(...).dequeue()`,
        else None (a `shared_name` stays: None too)."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "dequeue"
            and not call.args
            and isinstance(func.value, cst.Call)
            and syntax.qualified(ctx, func.value.func) == "range_input_producer"
        ):
            return None
        try:
            made = syntax.arguments(func.value, ARGS)
        except NotThisPattern:
            return None
        return None if "shared_name" in made else made

    def rewrite(self, made: dict, tf: str) -> tuple:
        """(the expression, what differs from legacy)."""
        # A tensor limit (PTB's epoch_size) is int32; tf.data counts in int64.
        limit = f"{tf}.cast({made['limit']}, {tf}.int64)"
        chain = f"{tf}.data.Dataset.range({limit})"
        shuffled = made.get("shuffle", "True") != "False"
        if shuffled:
            chain = f"({syntax.shuffled(chain, made, limit)})"
        chain += syntax.repeat(made)
        chain += f".map(lambda i: {tf}.cast(i, {tf}.int32))"
        differences = (
            "the shuffle order is tf.data's, not legacy's (each epoch holds the same indices)"
            if shuffled
            else "the same indices"
        )
        expression = f"{tf}.compat.v1.data.make_one_shot_iterator({chain}).get_next()"
        return cst.parse_expression(expression), differences
