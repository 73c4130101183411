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
        target, call = syntax.call_of(block[index])
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
            if not isinstance(tensors, (cst.List, cst.Tuple)):
                raise NotThisPattern("the batcher's tensors are not a list")
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
        for unsupported in ("enqueue_many", "shapes", *padded, "shared_name"):
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
        lines = [shuffled(dataset, p.args)] if p.batcher.startswith("shuffle") else []
        smaller = p.args.get("allow_smaller_final_batch", "False")
        drop = {"True": "False", "False": "True"}.get(smaller, f"not ({smaller})")
        if p.batcher == BUCKET:
            lines.append(_bucketed(dataset, p.args, drop))
        else:
            lines.append(
                f"{dataset} = {dataset}.batch({p.args['batch_size']}, drop_remainder={drop})"
            )
        return lines


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
    if pipeline.source == "slice_input_producer":
        said.append(
            f"its iterator is initialized where the program starts its queue runners "
            f"(the graph collection {INITIALIZERS!r})"
        )
    return "; ".join(said) or "the same batches"
