"""Room: a queue the program builds and fills itself ends the pipeline (resnet's
`cifar_input`, CIFAR-10's multi-GPU input):

    example_queue = tf.RandomShuffleQueue(capacity, min_after_dequeue,   # or FIFOQueue
                                          dtypes=[...], shapes=[...])
    enqueue = example_queue.enqueue([image, label])
    tf.train.add_queue_runner(tf.train.QueueRunner(example_queue, [enqueue] * threads))
    images, labels = example_queue.dequeue_many(batch_size)              # or dequeue_up_to

is what `batch` / `shuffle_batch` build inside, and becomes the same tf.data: a shuffle
buffer of `capacity` for a RandomShuffleQueue, then `batch(batch_size)`, whole batches
only for `dequeue_many` (legacy's failed on a short last one), and the queue's `shapes`
checked on each example as legacy's enqueue checked them (`tf.ensure_shape`). The queue,
its enqueue op and its runner must serve nothing else.
"""

import libcst as cst

from . import batching
from . import syntax
from .room import Pipeline
from .syntax import NotThisPattern

QUEUES = ("FIFOQueue", "RandomShuffleQueue")
_ARGS = {
    "FIFOQueue": ("capacity", "dtypes", "shapes", "names", "shared_name", "name"),
    "RandomShuffleQueue": (
        "capacity",
        "min_after_dequeue",
        "dtypes",
        "shapes",
        "names",
        "seed",
        "shared_name",
        "name",
    ),
}
_DEQUEUES = {"dequeue_many": "True", "dequeue_up_to": "False"}


def _method(node, owner: str, names) -> str:
    """`names`' method name where `node` is the call `owner.<method>(...)`, else ""."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == owner
        and node.func.attr.value in names
    ):
        return node.func.attr.value
    return ""


class HandBuiltQueue:
    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline, dependent: set) -> int:
        """Reads the queue at `block[index]`, its enqueue, runner and dequeue; returns the
        index after the dequeue."""
        target, call = syntax.call_of(block[index])
        kind = syntax.qualified(ctx, call.func)
        if not isinstance(target, cst.Name):
            raise NotThisPattern(f"the {kind} is not assigned to a name")
        queue = target.value
        args = syntax.arguments(call, _ARGS[kind])
        for unsupported in ("names", "shared_name"):
            if args.get(unsupported, "None") != "None":
                raise NotThisPattern(f"the {kind}'s {unsupported}")
        ours, enqueued, threads, dequeue = {queue}, None, None, None
        for at in range(index + 1, len(block)):
            statement = block[at]
            name, value = syntax.assigned(statement)
            if _method(value, queue, ("enqueue",)) and isinstance(name, cst.Name):
                enqueued = self._enqueued(value, enqueued)
                ours.add(name.value)
                continue
            served = syntax.served_calls(ctx, [statement])
            runners = [c for n, c in served if n == "QueueRunner"]
            if runners:
                threads, enqueued = self._runner(runners[0], queue, ours, enqueued)
                if isinstance(name, cst.Name):
                    ours.add(name.value)  # `qr = QueueRunner(...)`, added on the next line
                continue
            if {n for n, _ in served} == {"add_queue_runner"} and (
                syntax.names_in([statement]) & ours
            ):
                continue
            method = _method(value, queue, _DEQUEUES)
            if method:
                dequeue = (at, name, value, method)
                break
            if _method(value, queue, ("dequeue",)):
                raise NotThisPattern(f"{queue}.dequeue() reads one example a run, not a batch")
            if syntax.names_in([statement]) & ours:
                raise NotThisPattern(f"{queue} or its enqueue op serves something else")
            if not isinstance(statement, cst.SimpleStatementLine):
                raise NotThisPattern("a compound statement before the dequeue")
            if syntax.names_in([statement]) & dependent:
                pipeline.example.append(statement)
                dependent |= syntax.bound(statement)
            else:
                pipeline.kept.append(statement)
        if dequeue is None:
            raise NotThisPattern(f"no {queue}.dequeue_many(n) or dequeue_up_to(n) follows")
        if enqueued is None or threads is None:
            raise NotThisPattern(f"no QueueRunner runs an enqueue op of {queue}")
        at, target, call, method = dequeue
        if len(call.args) != 1 or (call.args[0].keyword and call.args[0].keyword.value != "n"):
            raise NotThisPattern(f"{queue}.{method} takes more than the batch size")
        if not isinstance(enqueued, (cst.List, cst.Tuple)):
            raise NotThisPattern("the enqueued tensors are not a list")
        names = [syntax.code(e.value) for e in enqueued.elements]
        if not set(names) <= dependent:
            raise NotThisPattern("the enqueued tensors are not computed per example")
        returned = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
        if args.get("shapes", "None") != "None":
            tf = pipeline.root
            returned = (
                f"{tf}.ensure_shape({names[0]}, ({args['shapes']})[0])"
                if len(names) == 1
                else f"tuple({tf}.ensure_shape(t, s) for t, s in zip({returned}, {args['shapes']}))"
            )
        pipeline.returned = returned
        pipeline.batcher = f"{kind}.{method}"
        pipeline.target = target
        pipeline.args = {
            **args,
            "batch_size": syntax.code(call.args[0].value),
            "num_threads": threads,
            "whole": _DEQUEUES[method],
        }
        pipeline.batch_comments = block[at].leading_lines
        after = block[at + 1 :]
        used = (dependent - syntax.target_names(target) | ours) & syntax.names_in(after)
        if used:
            raise NotThisPattern(
                f"{', '.join(sorted(used))}, of the example or its queue, is used after the dequeue"
            )
        return at + 1

    @staticmethod
    def _enqueued(call: cst.Call, before):
        if before is not None:
            raise NotThisPattern("more than one enqueue op")
        if len(call.args) != 1 or call.args[0].keyword is not None:
            raise NotThisPattern("the enqueue takes more than its tensors")
        return call.args[0].value

    def _runner(self, runner: cst.Call, queue: str, ours: set, enqueued) -> tuple:
        """(threads, enqueued tensors) of `QueueRunner(queue, [enqueue] * threads)`."""
        args = syntax.arguments(runner, ("queue", "enqueue_ops"))
        if args.get("queue") != queue or args.keys() != {"queue", "enqueue_ops"}:
            raise NotThisPattern(f"a QueueRunner of {queue} with other arguments")
        ops = cst.parse_expression(args["enqueue_ops"])
        threads = "1"
        if isinstance(ops, cst.BinaryOperation) and isinstance(ops.operator, cst.Multiply):
            ops, threads = ops.left, syntax.code(ops.right)
        if not isinstance(ops, cst.List) or not ops.elements:
            raise NotThisPattern("the QueueRunner's enqueue ops are not a list")
        for element in ops.elements:
            op = element.value
            if _method(op, queue, ("enqueue",)):
                enqueued = self._enqueued(op, enqueued)
            elif not (isinstance(op, cst.Name) and op.value in ours):
                raise NotThisPattern("the QueueRunner runs other ops")
        if enqueued is None:
            raise NotThisPattern("the QueueRunner's enqueue ops are not one enqueue")
        if len(ops.elements) > 1:
            threads = (
                f"{len(ops.elements)} * {threads}" if threads != "1" else str(len(ops.elements))
            )
        return threads, enqueued

    def rewrite(self, p: Pipeline, n: int) -> list:
        dataset = f"_dataset_{n}"
        shuffles = p.batcher.startswith("RandomShuffleQueue")
        lines = [batching.shuffled(dataset, p.args)] if shuffles else []
        lines.append(
            f"{dataset} = {dataset}.batch({p.args['batch_size']}, drop_remainder={p.args['whole']})"
        )
        return lines
