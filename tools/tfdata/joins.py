"""Room: several reads of one filename queue, for `batch_join` / `shuffle_batch_join`:

    examples = [read(q) for _ in range(n)]          # a function of the module that reads
    batch = tf.train.shuffle_batch_join(examples, ...)

or a loop that reads and appends an example each time:

    examples = []
    for _ in range(n):
        _, value = tf.TextLineReader().read(q)
        ...statements...
        examples.append([x, y])

The n readers become tf.data's interleave of n files at once (legacy's readers took turns
on threads); the batcher must be a `_join` of that list (batching.py checks).
"""

import libcst as cst

from . import reader_chain
from . import reading_function
from . import syntax
from .room import Pipeline
from .syntax import NotThisPattern


class Joins:
    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline):
        if index >= len(block):
            return None
        looped = self._loop(ctx, block, index, pipeline)
        if looped is not None:
            return looped
        target, value = syntax.assigned(block[index])
        if not isinstance(value, cst.ListComp):
            return None
        call, loop = value.elt, value.for_in
        if not (
            isinstance(call, cst.Call)
            and loop.inner_for_in is None
            and not loop.ifs
            and syntax.range_count(loop.iter) is not None
            and isinstance(loop.target, cst.Name)
            and loop.target.value not in syntax.names_in([call])
        ):
            return None
        found = reading_function.function_read(ctx, pipeline, call, pipeline.queue)
        if found is None:
            return None
        pipeline.readers = syntax.range_count(loop.iter)
        pipeline.params, body, pipeline.returned = found
        pipeline.example.extend(body)
        if not isinstance(target, cst.Name):
            raise NotThisPattern("the readers' list is not assigned to a name")
        syntax.unused(pipeline.queue, block[index + 1 :])
        return index + 1, syntax.names_in([target])

    def _loop(self, ctx, block: list, index: int, pipeline: Pipeline):
        """`examples = []` and `for _ in range(n):` reading the queue and appending an
        example, at `index`: (next index, dependent names), else None."""
        target, value = syntax.assigned(block[index])
        loop = block[index + 1] if index + 1 < len(block) else None
        if not (
            isinstance(target, cst.Name)
            and isinstance(value, cst.List)
            and not value.elements
            and isinstance(loop, cst.For)
            and syntax.range_count(loop.iter) is not None
            and isinstance(loop.target, cst.Name)
            and loop.orelse is None
            and isinstance(loop.body, cst.IndentedBlock)
        ):
            return None
        name = target.value
        record, rest, last = reader_chain.reads(
            ctx, pipeline, list(loop.body.body), pipeline.queue, "the loop"
        )
        appended = last.body[0]
        if not (
            isinstance(appended, cst.Expr)
            and isinstance(appended.value, cst.Call)
            and syntax.code(appended.value.func) == f"{name}.append"
            and len(appended.value.args) == 1
        ):
            raise NotThisPattern(f"the loop does not end with {name}.append(example)")
        example = appended.value.args[0].value
        if loop.target.value in syntax.names_in([*rest, example]):
            raise NotThisPattern("the loop's example depends on its counter")
        if isinstance(example, cst.List):  # tf.data takes a tuple for a list of components
            example = cst.Tuple(elements=example.elements)
        pipeline.readers = syntax.range_count(loop.iter)
        pipeline.params, pipeline.returned = record, syntax.code(example)
        pipeline.example.extend(rest)
        syntax.unused(pipeline.queue, block[index + 2 :])
        return index + 2, {name}

    def rewrite(self, pipeline: Pipeline, n: int) -> list:
        return reader_chain.ReaderChain().rewrite(pipeline, n)
