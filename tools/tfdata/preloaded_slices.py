"""Room: preloaded data sliced by `slice_input_producer`:

    image, label = tf.train.slice_input_producer([images, labels], num_epochs=E, shuffle=S)
    ...statements...
    a, b = tf.train.batch([image, label], batch_size=B)

becomes a Dataset of indices (shuffled each epoch as legacy shuffled them; the preloaded
tensors are never copied) mapped through `gather`. Sliced tensors are often variables the
program fills after its initializers (a one-shot iterator cannot capture those), so the
pipeline gets an initializable iterator whose initializer joins the graph collection
`to_tfdata_initializers`, and the program runs that collection where it started its queue
runners, after its own initializers, as legacy's reading started there.
"""

import libcst as cst

from . import syntax
from .room import INITIALIZERS
from .room import SESSION_INITIALIZERS
from .room import Pipeline
from .syntax import NotThisPattern

ARGS = ("tensor_list", "num_epochs", "shuffle", "seed", "capacity", "shared_name")


def starts_runners(ctx, statement) -> cst.Call | None:
    """The `start_queue_runners(...)` call of a simple statement, or None."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    starts = [c for n, c in syntax.served_calls(ctx, [statement]) if n == "start_queue_runners"]
    return starts[0] if starts else None


def initialize(start: cst.Call) -> list:
    """`sess.run(<the slice pipelines' initializers>)`, for before `start` runs."""
    try:
        args = syntax.arguments(start, ("sess", "coord", "daemon", "start", "collection"))
    except NotThisPattern:
        return []
    tf = syntax.tf_root(start.func)
    session = args.get("sess", f"{tf}.compat.v1.get_default_session()")
    return [syntax.statement(f"{session}.run({tf}.compat.v1.get_collection({INITIALIZERS!r}))")]


class PreloadedSlices:
    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline):
        target, _ = syntax.call_of(block[index])
        if not ctx.starts:
            # A Supervisor or a MonitoredSession starts the runners: their local init op
            # runs the table initializers, after the variables' initializers.
            pipeline.initializers = SESSION_INITIALIZERS
        if isinstance(target, cst.Name):
            pipeline.params = f"*{target.value}"
        elif isinstance(target, (cst.Tuple, cst.List)) and all(
            isinstance(e.value, cst.Name) for e in target.elements
        ):
            pipeline.params = ", ".join(e.value.value for e in target.elements)
        else:
            raise NotThisPattern("its tensors are not assigned to names")
        return index + 1, syntax.names_in([target])

    def rewrite(self, p: Pipeline, n: int) -> list:
        tf, dataset, slices = p.root, f"_dataset_{n}", f"_slices_{n}"
        count = f"{tf}.shape({slices}[0], out_type={tf}.int64)[0]"
        lines = [
            f"{slices} = [{tf}.convert_to_tensor(t) for t in {p.made['tensor_list']}]",
            f"{dataset} = {tf}.data.Dataset.range({count})",
        ]
        lines += syntax.shuffle_line(dataset, p.made, count)
        lines += [
            f"{dataset} = {dataset}{syntax.repeat(p.made)}",
            f"{dataset} = {dataset}.map(lambda i: _example_{n}("
            f"*[{tf}.gather(t, i) for t in {slices}]))",
        ]
        return lines
