"""The v1 control-flow contexts of ops imported into our functions (capture/capture.py).

`import_graph_def` restores no control-flow contexts; a traced function's automatic
control dependencies read them (the private APIs are tf_internals.py's).
"""

from compat_input._src.core import tf_internals


def _reached(ops: list, starts: tuple, until: tuple = ()) -> set:
    """The ops among `ops` that an op of a type in `starts` reaches through outputs and
    control edges, up to and with the ops of a type in `until`."""
    ours = set(ops)
    frontier = [op for op in ops if op.type in starts]
    seen: set = set()
    while frontier:
        op = frontier.pop()
        if op in seen or op not in ours:
            continue
        seen.add(op)
        if op.type in until:
            continue
        frontier.extend(c for t in op.outputs for c in t.consumers())
        frontier.extend(tf_internals.control_outputs(op))
    return seen


def mark_in_loops(ops: list) -> None:
    """Gives the v1 while-loop ops among `ops` (just imported into a function) a while
    context, as the graph they came from had.

    `import_graph_def` restores no control-flow contexts. A traced function's automatic
    control dependencies skip ops in while loops by their context; without one they made
    the function's outputs wait on the loop's Merge, inside the loop's frame, and every run
    failed ("has inputs from different frames"): any TF1-behaviour program with a
    `tf.while_loop` in its per-example graph. In a loop: what an Enter reaches, up to and
    with its Exit.
    """
    if not tf_internals.has_control_flow_contexts:
        return
    seen = _reached(ops, ("Enter", "RefEnter"), until=("Exit", "RefExit"))
    if seen:
        context = tf_internals.while_context("compat_input_imported_loop")
        for op in seen:
            tf_internals.set_control_flow_context(op, context)


def mark_in_conds(ops: list) -> None:
    """Gives the ops among `ops` (just imported into a function) that a v1 cond's Switch
    reaches a control-flow context, as the graph they came from had.

    A traced function's automatic control dependencies chain the stateful ops that have no
    context, in the order made: an `Assert` of a branch not taken (tf.image's crops and
    pads hold several) then held back every stateful op after it, the other branch's
    included, which turned dead with it, and so did the function's output ("No return
    value for index 0"): facenet's input, `tf.cond(flag, random_crop, crop_or_pad)`. The
    legacy session chained nothing; with a context, nothing here is chained either.
    """
    if not tf_internals.has_control_flow_contexts:
        return
    context = None
    for op in _reached(ops, ("Switch", "RefSwitch")):
        if not tf_internals.in_control_flow(op):  # A loop's ops keep their while context.
            context = context or tf_internals.cond_context()
            tf_internals.set_control_flow_context(op, context)
