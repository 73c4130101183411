"""Room: the batcher that ends a pipeline, `batch` / `shuffle_batch`, their `_join`s and
contrib's `bucket_by_sequence_length`, as tf.data's shuffle buffer, `batch` or
`bucket_by_sequence_length`; and what tf.data does not keep, for the report."""

import libcst as cst

from . import syntax
from .room import INITIALIZERS
from .room import Pipeline
from .syntax import NotThisPattern

BUCKET = "bucket_by_sequence_length"
BATCHERS = ("batch", "shuffle_batch", "batch_join", "shuffle_batch_join", BUCKET)
# contrib.training's other batchers ending a pipeline: why each stays on compat_input.
NO_TFDATA = {
    "stratified_sample": "stratified_sample: tf.data's rejection_resample mixes the initial "
    "class distribution into its output and draws other random numbers, so its batches "
    "would differ; compat_input keeps legacy's",
    "rejection_sample": "rejection_sample: tf.data has no per-example acceptance sampler "
    "that draws legacy's numbers; compat_input keeps them",
    "bucket": "bucket: not converted yet (tf.data's group_by_window would take its which_bucket)",
    "batch_sequences_with_states": "batch_sequences_with_states: tf.data has no state saver; "
    "compat_input serves one",
}
JOINS = ("batch_join", "shuffle_batch_join")

_BATCH_ARGS = (
    "tensors",
    "batch_size",
    "num_threads",
    "capacity",
    "enqueue_many",
    "shapes",
    "dynamic_pad",
    "allow_smaller_final_batch",
    "shared_name",
    "name",
)
_SHUFFLE_ARGS = (
    "tensors",
    "batch_size",
    "capacity",
    "min_after_dequeue",
    "num_threads",
    "seed",
    "enqueue_many",
    "shapes",
    "allow_smaller_final_batch",
    "shared_name",
    "name",
)
_BUCKET_ARGS = (
    "input_length",
    "tensors",
    "batch_size",
    "bucket_boundaries",
    "num_threads",
    "capacity",
    "bucket_capacities",
    "shapes",
    "dynamic_pad",
    "allow_smaller_final_batch",
    "keep_input",
    "shared_name",
    "name",
)
_JOIN_ARGS = {
    "batch_join": ("tensors_list", *_BATCH_ARGS[1:2], *_BATCH_ARGS[3:]),
    "shuffle_batch_join": ("tensors_list", *_SHUFFLE_ARGS[1:4], *_SHUFFLE_ARGS[5:]),
}
_ARGS = {"shuffle_batch": _SHUFFLE_ARGS, BUCKET: _BUCKET_ARGS}


class Batching:
    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline, dependent: set) -> int:
        """Reads the batcher at `block[index]` into `pipeline`; returns the index after it."""
        # `return batch(...)`: no target, the batch is returned.
        target, call = syntax.called(block[index])
        after = block[index + 1 :]
        pipeline.batch_comments = block[index].leading_lines
        batcher = syntax.qualified(ctx, call.func)
        pipeline.batcher, pipeline.target = batcher, target
        if batcher in JOINS:
            args = syntax.arguments(call, _JOIN_ARGS[batcher])
            if not pipeline.readers or args["tensors_list"] not in dependent:
                raise NotThisPattern(f"{batcher} of other than a function's reads")
        elif pipeline.readers:
            raise NotThisPattern("a list of reads batched by other than a _join")
        else:
            args = syntax.arguments(call, _ARGS.get(batcher, _BATCH_ARGS))
            tensors = cst.parse_expression(args["tensors"])
            if isinstance(tensors, cst.Name) and tensors.value in dependent:
                # `batch(input_queues, ...)` of `input_queues = slice_input_producer([X, Y])`:
                # a list of tensors, returned as a tuple (a list would be stacked into one).
                names = [f"*{tensors.value}"]
                # A dict of tensors (census's features) is a tf.data element as it is.
                pipeline.returned = (
                    f"(tuple({tensors.value}) if isinstance({tensors.value}, list) "
                    f"else {tensors.value})"
                )
            elif not isinstance(tensors, (cst.List, cst.Tuple)):
                raise NotThisPattern(
                    "the batcher's tensors are neither a list nor a name computed per example"
                )
            else:
                names = [syntax.code(e.value) for e in tensors.elements]
                pipeline.returned = names[0] if len(names) == 1 else "(" + ", ".join(names) + ",)"
            if batcher == BUCKET:
                # contrib's (lengths, [tensors...]): the length travels as the first component.
                tf = pipeline.root
                length = f"{tf}.cast({args['input_length']}, {tf}.int32)"
                pipeline.returned = f"({length}, ({', '.join(names)},))"
        pipeline.args = args
        # dynamic_pad: tf.data's bucketing pads every batch (without it, legacy's shapes were
        # fully defined, so padding changes nothing).
        padded = ("dynamic_pad",) if batcher != BUCKET else ()
        for unsupported in ("shapes", *padded, "shared_name"):
            if args.get(unsupported, "False") not in ("False", "None"):
                raise NotThisPattern(f"the batcher's {unsupported}")
        if args.get("keep_input", "True") != "True":
            raise NotThisPattern("the batcher's keep_input")
        # The batch may take the example's names (`image, label = batch([image, label])`).
        per_example = dependent - syntax.target_names(target)
        used = per_example & syntax.names_in(after)
        if used:
            raise NotThisPattern(
                f"{', '.join(sorted(used))}, computed per example, is used after the batcher"
            )
        return index + 1

    def rewrite(self, p: Pipeline, n: int) -> list:
        dataset = f"_dataset_{n}"
        lines = []
        many = p.args.get("enqueue_many", "False")
        if many != "False":
            # enqueue_many: each element is a block of examples, split along its first axis.
            unbatched = f"{dataset}.unbatch()"
            lines.append(
                f"{dataset} = {unbatched}"
                if many == "True"
                else f"{dataset} = {unbatched} if {many} else {dataset}"
            )
        if p.batcher.startswith("shuffle"):
            lines.append(shuffled(dataset, p.args))
        smaller = p.args.get("allow_smaller_final_batch", "False")
        drop = {"True": "False", "False": "True"}.get(smaller, f"not ({smaller})")
        if p.batcher == BUCKET:
            lines.append(_bucketed(dataset, p.args, drop))
        else:
            lines.append(
                f"{dataset} = {dataset}.batch({p.args['batch_size']}, drop_remainder={drop})"
            )
        return lines


UNBATCHED = "unbatched read"


class Unbatched:
    """A function that reads one example and returns it (CS20's `read_from_tfrecord`):
    `return label, shape, image` of names computed per example. The dataset is not
    batched: each run of the returned tensors takes the next example, as each run of the
    reader's read took the next record."""

    @staticmethod
    def returns_example(statement, dependent: set) -> bool:
        value = syntax.returned(statement)
        if value is None:
            return False
        names = value.elements if isinstance(value, cst.Tuple) else None
        plain = isinstance(value, cst.Name) or (
            names is not None and all(isinstance(e.value, cst.Name) for e in names)
        )
        return plain and bool(syntax.names_in([value]) & dependent)

    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline, dependent: set) -> int:
        del ctx, dependent
        value = syntax.returned(block[index])
        pipeline.batcher, pipeline.args = UNBATCHED, {}
        # The returned names, now taken from the iterator; the return itself stays.
        pipeline.target = value.with_changes(lpar=[], rpar=[])
        pipeline.returned = syntax.code(pipeline.target)
        return index

    def rewrite(self, p: Pipeline, n: int) -> list:
        del p, n
        return []


def shuffled(dataset: str, args: dict) -> str:
    """A shuffle buffer of the queue's `capacity`, as legacy's RandomShuffleQueue held."""
    return f"{dataset} = {dataset}.shuffle({args['capacity']}, seed={args.get('seed', 'None')})"


def _bucketed(dataset: str, args: dict, drop: str) -> str:
    """tf.data's bucket_by_sequence_length: contrib's buckets ([b[i-1], b[i]), one
    below the first boundary, one from the last on), batches leaving as buckets fill."""
    boundaries, size = args["bucket_boundaries"], args["batch_size"]
    sizes = size if size.startswith(("[", "(")) else f"[{size}] * (len({boundaries}) + 1)"
    return (
        f"{dataset} = {dataset}.bucket_by_sequence_length(lambda length, tensors: length, "
        f"{boundaries}, {sizes}, drop_remainder={drop})"
    )


def differences(pipeline: Pipeline) -> str:
    """What tf.data does not keep of the legacy pipeline, for the report and the comment."""
    said = []
    if pipeline.made.get("shuffle", "True") != "False" or pipeline.batcher.startswith(
        ("shuffle", "RandomShuffleQueue")
    ):
        said.append(
            "the shuffle order is tf.data's, not legacy's (each epoch holds the same examples)"
        )
    if pipeline.readers:
        said.append(
            f"{pipeline.readers} files read at once, interleaved by tf.data (legacy's "
            "readers took turns on threads)"
        )
    if pipeline.args.get("num_threads", "1") not in ("1",):
        said.append("one reading thread, in order (legacy's several threads interleaved)")
    smaller = pipeline.args.get("allow_smaller_final_batch", "False") != "False"
    if pipeline.batcher == BUCKET and smaller:
        said.append(
            "each bucket's last partial batch comes at the end (legacy lost them); "
            "the bucket outputs are tuples"
        )
    elif pipeline.batcher == BUCKET:
        said.append("the bucket outputs are tuples (contrib gave lists)")
    if pipeline.source == "slice_input_producer" and pipeline.initializers == INITIALIZERS:
        said.append(
            f"its iterator is initialized where the program starts its queue runners "
            f"(the graph collection {INITIALIZERS!r})"
        )
    elif pipeline.source == "slice_input_producer":
        said.append(
            "its iterator is initialized by the Supervisor's or MonitoredSession's local "
            f"init op (the graph collection {pipeline.initializers!r}, which "
            "tf.compat.v1.tables_initializer() also runs)"
        )
    return "; ".join(said) or "the same batches"
