"""Room: the read in a function of the module that takes the queue (TensorFlow's
reading-data tutorial):

    def read_and_decode(filename_queue):
        reader = tf.TFRecordReader()
        _, serialized = reader.read(filename_queue)
        ...statements...
        return image, label

    image, label = read_and_decode(q)

The function's statements after the read join the example function; the function itself
goes where nothing else calls it. The source is the reader chain's.
"""

import libcst as cst

from . import reader_chain
from . import reading_methods
from . import syntax
from .room import Pipeline
from .syntax import NotThisPattern


def function_read(ctx, pipeline: Pipeline, call, queue: str):
    """(record name, statements, returned code) when `call` calls a function of the
    module with the queue alone, and it reads the queue, or a reader class's method the
    project converts; None where it is no such call."""
    by_method = reading_methods.method_read(ctx, pipeline, call, queue)
    if by_method is not None:
        return by_method
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ctx.functions
        and len(call.args) == 1
        and syntax.code(call.args[0].value) == queue
    ):
        return None
    function = ctx.functions[call.func.value]
    params = function.params
    if (
        len(params.params) != 1
        or isinstance(params.star_arg, cst.Param)
        or params.kwonly_params
        or params.star_kwarg
    ):
        raise NotThisPattern(f"{call.func.value} takes more than the queue")
    body = list(function.body.body)
    if body and syntax.docstring(body[0]):
        body = body[1:]
    record, rest, last = reader_chain.reads(
        ctx, pipeline, body, params.params[0].name.value, call.func.value
    )
    if not (isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
        raise NotThisPattern(f"{call.func.value} does not end with a return")
    pipeline.reads_in = call.func.value
    return record, rest, syntax.code(last.body[0].value)


class ReadingFunction:
    """`x, y = read(q)`: one call of a function of the module that reads the queue."""

    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline):
        target, value = syntax.assigned(block[index]) if index < len(block) else (None, None)
        found = function_read(ctx, pipeline, value, pipeline.queue)
        if found is None:
            return None
        record, body, returned = found
        pipeline.params = record
        pipeline.example.extend(body)
        if not isinstance(target, (cst.Name, cst.Tuple, cst.List)):
            raise NotThisPattern("the read's result is not assigned to names")
        if pipeline.reads_by:  # The element is what the method returns: it takes the names.
            names = target.elements if not isinstance(target, cst.Name) else [target]
            pipeline.params = ", ".join(syntax.code(getattr(e, "value", e)) for e in names)
            pipeline.returned = pipeline.params
            syntax.unused(pipeline.queue, block[index + 1 :])
            return index + 1, syntax.names_in([target])
        if syntax.code(target) != returned:  # `image, label = read(q)` returns those
            pipeline.example.append(syntax.statement(f"{syntax.code(target)} = {returned}"))
        syntax.unused(pipeline.queue, block[index + 1 :])
        return index + 1, syntax.names_in([target])

    def rewrite(self, pipeline: Pipeline, n: int) -> list:
        return reader_chain.ReaderChain().rewrite(pipeline, n)
