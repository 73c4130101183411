"""Batchers: `batch`, `shuffle_batch`, their `_join` and `maybe_` variants, on tf.data.

Every batcher is one builder, `_build`, fed by thin shims that keep the legacy names,
signatures and defaults. The builder checks the inputs as legacy did (same errors),
captures the per-example graph of each input list (capture.py), and assembles
`sources -> map(captured graph) -> [filter keep_input] -> [unbatch] -> [shuffle] -> batch
-> prefetch`, whose iterator's `get_next()` is returned in the legacy structure: a list, a
dict, or a bare tensor for a one-element list, with the legacy static shapes.

Several input lists (`_join`) are combined the way their legacy threads shared work:
lists reading one shared stream take its elements in turn; readers over one producer
interleave its files; independent lists take turns. Legacy interleaved by thread timing;
here the order is fixed, so it is reproducible.
"""

import dataclasses
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src import capture as capture_lib
from compat_input._src import errors
from compat_input._src import origins
from compat_input._src import pipeline as pipeline_lib
from compat_input._src import tracing
from compat_input._src import vectorize
from compat_input._src.options import options

tf1 = tf.compat.v1


@dataclasses.dataclass
class _Structure:
    """How the legacy call passed its tensors, to return batches the same way."""

    kind: str  # "dict" | "list" | "single"
    keys: Optional[list] = None

    def flatten(self, tensors) -> list:
        if self.kind == "dict":
            return [tensors[k] for k in self.keys]
        return list(tensors)

    def restore(self, flat: list) -> Any:
        if self.kind == "dict":
            return dict(zip(self.keys, flat))
        if self.kind == "single":
            return flat[0]
        return list(flat)


def _structure(tensors, what: str) -> _Structure:
    if isinstance(tensors, dict):
        return _Structure("dict", sorted(tensors, key=str))
    if isinstance(tensors, (list, tuple)):
        return _Structure("single" if len(tensors) == 1 else "list")
    raise TypeError(
        f"{what} expects a list, tuple or dict of tensors, got {type(tensors).__name__} "
        f"{getattr(tensors, 'name', tensors)!r}: wrap a single tensor in a list, [tensor]."
    )


def _convert(values: list) -> list:
    return [
        v if isinstance(v, tf.SparseTensor) else tf1.convert_to_tensor_or_indexed_slices(v)
        for v in values
    ]


def _keep_input(keep_input, enqueue_many: bool):
    if isinstance(keep_input, bool):
        return keep_input
    keep_input = tf.convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    constant = tf.get_static_value(keep_input)
    if keep_input.shape.ndims == 0 and constant is not None:
        return bool(constant)
    return keep_input


def _dtypes(lists: list) -> list:
    all_types = [[t.dtype for t in tl] for tl in lists]
    for other in all_types[1:]:
        if other != all_types[0]:
            raise TypeError(
                "Expected types to be consistent: "
                f"{', '.join(x.name for x in all_types[0])} vs. {', '.join(x.name for x in other)}."
            )
    return all_types[0]


def _shapes(lists: list, shapes, enqueue_many: bool, dynamic_pad: bool) -> list:
    """Per-example shapes, merged across lists, checked as the legacy queues checked them."""
    if shapes is not None:
        result = [tf.TensorShape(s) for s in shapes]
    else:
        result = []
        for i in range(len(lists[0])):
            merged = None
            for tl in lists:
                t = tl[i]
                if isinstance(t, tf.SparseTensor):
                    merged = tf.TensorShape(None)
                    break
                if t.shape.ndims is None:
                    raise ValueError(f"Cannot infer Tensor's rank: {t}")
                s = t.shape.with_rank_at_least(1)[1:] if enqueue_many else t.shape
                merged = s if merged is None else merged.merge_with(s)
            result.append(merged)
    dense = [s for s, t in zip(result, lists[0]) if not isinstance(t, tf.SparseTensor)]
    if not dynamic_pad and not all(s.is_fully_defined() for s in dense):
        raise ValueError(f"All shapes must be fully defined: {dense}")
    if dynamic_pad and not all(s.rank is not None for s in dense):
        raise ValueError(f"All shapes must have a defined rank: {dense}")
    return result


def _flat_targets(tensors: list) -> list:
    flat = []
    for t in tensors:
        flat.extend([t.indices, t.values, t.dense_shape] if isinstance(t, tf.SparseTensor) else [t])
    return flat


def _regroup(tensors: list, outputs: list) -> list:
    it = iter(outputs)
    result = []
    for t in tensors:
        if isinstance(t, tf.SparseTensor):
            result.append(tf.SparseTensor(next(it), next(it), next(it)))
        else:
            result.append(next(it))
    return result


@dataclasses.dataclass
class _List:
    """One legacy input list: its captured graph and how to turn outputs into examples."""

    tensors: list
    captured: capture_lib.Captured
    keep: Any  # True, a scalar or vector tensor (captured as the last output)
    shapes: list  # per-example shapes
    enqueue_many: bool
    # Under bad_records="skip": a counter of examples that entered the per-example graph.
    entered: Any = None

    def passthrough(self) -> bool:
        """The source's elements are the examples already, with the right shapes."""
        if self.entered is not None:
            return False
        if not self.captured.passthrough or self.keep is not True or self.enqueue_many:
            return False
        specs = tf.nest.flatten(self.captured.sources[0].dataset.element_spec)
        return all(
            isinstance(spec, tf.TensorSpec) and spec.shape == s
            for spec, s in zip(specs, self.shapes)
        )

    def vectorizable(self) -> bool:
        """Whether mapping a block at once is provably the same as one example at a time."""
        if self.entered is not None:
            return False  # A failing block would drop every example in it.
        if self.enqueue_many or any(isinstance(t, tf.SparseTensor) for t in self.tensors):
            return False
        if self.keep is not True and self.keep.shape.ndims != 0:
            return False
        specs = [
            s for src in self.captured.sources for s in tf.nest.flatten(src.dataset.element_spec)
        ]
        if not specs or not all(isinstance(s, tf.TensorSpec) for s in specs):
            return False
        if not all(s.is_fully_defined() for s in self.shapes):
            return False  # Examples of several shapes (dynamic_pad) do not stack into blocks.
        # Checks stay checks; unseeded random ops draw for each example of a block, as they
        # drew for each example before. Other state would see one call per block.
        return all(capture_lib.per_example_safe(op) for op in self.captured.ops)

    def block_size(self) -> int:
        """Examples per vectorized block (see vectorize.block_size)."""
        shapes, dtypes = list(self.shapes), [t.dtype for t in self.tensors]
        if self.keep is not True:  # The keep_input column.
            shapes.append(tf.TensorShape([]))
            dtypes.append(tf.bool)
        return vectorize.block_size(shapes, dtypes)

    def examples(self, element, ordinal=None, log=None) -> tuple:
        """The element's values, shaped, with a scalar keep_input as a trailing column.

        Everything per element happens in this one map: each extra tf.data map costs tens of
        microseconds per element. With a `log`, the example is logged as it enters and
        leaves, so that an error can name the record it came from.
        """
        with tf.name_scope(origins.EXAMPLE_SCOPE):
            entering = []
            if log is not None:
                entering.append(log.enter(ordinal, self.captured.origin(element)))
            if self.entered is not None:
                # Counted before the graph runs, so an example that fails is counted too.
                one = tf.constant(1, tf.int64)
                entering.append(
                    tf.raw_ops.AssignAddVariableOp(resource=self.entered.handle, value=one)
                )
            with tf.control_dependencies(entering):
                outputs = self.captured(element)
            values = self._shaped(outputs)
            if log is None:
                return values
            with tf.control_dependencies(tf.nest.flatten(values, expand_composites=True)):
                left = log.leave(ordinal)
            with tf.control_dependencies([left]):
                return tf.nest.map_structure(tf.identity, values, expand_composites=True)

    def _shaped(self, outputs: list) -> tuple:
        values = _regroup(self.tensors, outputs[: len(outputs) - (0 if self.keep is True else 1)])
        keep = None if self.keep is True else outputs[-1]
        if keep is not None and self.keep.shape.ndims == 1:
            values = [
                tf.sparse.retain(v, keep)
                if isinstance(v, tf.SparseTensor)
                else tf.boolean_mask(v, keep)
                for v in values
            ]
            keep = None
        lead = tf.TensorShape([None] if self.enqueue_many else [])
        values = [
            v
            if isinstance(v, tf.SparseTensor) or s.rank is None
            else tf.ensure_shape(v, lead.concatenate(s))
            for v, s in zip(values, self.shapes)
        ]
        return tuple(values) + (() if keep is None else (keep,))


def _capture_list(tensors: list, keep, what: str, shapes: list, enqueue_many: bool) -> _List:
    targets = _flat_targets(tensors)
    if keep is not True and keep is not False:
        targets.append(keep)
    captured = capture_lib.capture(targets, what)
    return _List(tensors, captured, True if keep is False else keep, shapes, enqueue_many)


def _options() -> tf.data.Options:
    options = tf.data.Options()
    # Fusing adjacent maps and filters saves a function call per element each.
    options.experimental_optimization.map_and_filter_fusion = True
    options.experimental_optimization.map_fusion = True
    options.experimental_optimization.filter_fusion = True
    return options


_OPTIONS = _options()


def _stateless(lists: list) -> bool:
    """Parallel map only where it cannot change results: no stateful op in the graph."""
    return not any(item.captured.stateful for item in lists)


def _in_turn(lists: list, log):
    """A map function sending element `(ordinal, index, *element)` to list `index % len`."""

    def examples(ordinal, index, *element):
        return tf.switch_case(
            tf.cast(index % len(lists), tf.int32),
            [lambda item=item: item.examples(element, ordinal, log) for item in lists],
        )

    return examples


def _log(item: _List, skipping: bool, logs: list) -> Optional[origins.ExampleLog]:
    """Under bad_records="skip", a log of the examples in flight, to name the skipped ones.

    Only then: a stateful op per example costs microseconds, and the map already runs one
    example at a time under that policy.
    """
    if not skipping:
        return None
    log = origins.ExampleLog(item.captured.origin_kind())
    logs.append(log)
    return log


def _map_examples(dataset: tf.data.Dataset, examples, log, parallel) -> tf.data.Dataset:
    """`examples(element, ordinal)` over `dataset`; elements are numbered only for a log."""
    if log is None:
        return dataset.map(lambda *element: examples(element, None), **parallel)
    return dataset.enumerate().map(lambda i, *element: examples(element, i), **parallel)


def _combine(lists: list, what: str, parallel, logs: list) -> tf.data.Dataset:
    """The examples of every list in one stream; the example logs made go into `logs`."""
    skipping = lists[0].entered is not None
    if len(lists) == 1:
        only = lists[0]
        if only.passthrough():
            return only.captured.source_dataset
        return _examples_of(only, only.captured.source_dataset, parallel, skipping, logs)
    sources = [tuple(id(s) for s in item.captured.sources) for item in lists]
    if sources[0] and all(s == sources[0] for s in sources):
        # One shared stream (one reader, or one producer): its elements go to the lists in
        # turn, as each legacy enqueue thread took the next element.
        log = _log(lists[0], skipping, logs)
        numbered = lists[0].captured.source_dataset.enumerate()
        return numbered.map(lambda i, *e: _in_turn(lists, log)(i, i, *e), **parallel)
    singles = [item.captured.sources for item in lists]
    if (
        all(len(s) == 1 and s[0].work_source is not None for s in singles)
        and len({id(s[0].work_source) for s in singles}) == 1
    ):
        # Several readers over one producer: each legacy reader thread took the next file,
        # so files are read side by side, one per list.
        work = singles[0][0].work_source
        records = singles[0][0].records
        count = len(lists)
        files = work.dataset.enumerate()
        # Elements are `(file index, key, value)`; file k goes to list k % count.
        interleaved = files.interleave(
            lambda k, item: records(k, item).map(lambda *r: (k,) + tuple(r)),
            cycle_length=count,
            block_length=1,
            deterministic=True,
        )
        if parallel and all(item.vectorizable() for item in lists):
            blocks = vectorize.map_blocks(
                interleaved,
                [lambda e, item=item: item.examples(e[1:]) for item in lists],
                parallel,
                which=lambda e: e[0] % count,
                block=lists[0].block_size(),
            )
            if blocks is not None:
                return blocks
        log = _log(lists[0], skipping, logs)
        turn = _in_turn(lists, log)
        # Numbered for a log: nested one deeper.
        return _map_examples(
            interleaved, lambda element, i: turn(i, *tf.nest.flatten(element)), log, parallel
        )
    seen: set = set()
    for s in singles:
        ids = {id(x) for x in s}
        if ids & seen:
            raise errors.CaptureError(
                f"{what}: the input lists share some sources but not all; compat_input can "
                "join lists that read one shared stream, readers over one producer, or "
                "independent inputs."
            )
        seen |= ids
    return _take_turns(
        [
            _examples_of(item, item.captured.source_dataset, parallel, skipping, logs)
            for item in lists
        ]
    )


def _examples_of(item: _List, elements, parallel, skipping: bool, logs: list):
    """The examples of one list made from its source's `elements`."""
    if parallel and item.vectorizable():
        # A block at a time (vectorize.py). Only with num_threads > 1, where legacy delivery
        # before an error already depended on thread timing: a bad record fails its block.
        blocks = vectorize.map_blocks(elements, [item.examples], parallel, block=item.block_size())
        if blocks is not None:
            return blocks
    log = _log(item, skipping, logs)
    return _map_examples(elements, lambda element, i: item.examples(element, i, log), log, parallel)


def _take_turns(datasets: list) -> tf.data.Dataset:
    """One example of each dataset in turn; an exhausted one drops out."""
    return tf.data.Dataset.choose_from_datasets(
        datasets, tf.data.Dataset.range(len(datasets)).repeat(), stop_on_empty_dataset=False
    )


def _skip_counters() -> tuple:
    """Counters of examples entering the per-example graph and getting through it."""
    return tuple(
        pipeline_lib.state_variable(tf.constant(0, tf.int64), name)
        for name in ("entered_examples", "passed_examples")
    )


def _skipping(dataset: tf.data.Dataset, passed: tf.Variable) -> tf.data.Dataset:
    """Drops examples whose per-example graph fails, counting those that get through.

    tf.data cannot catch an error inside a map function, only drop the element
    (`ignore_errors`); `skipped_records` compares the two counters.
    """
    handle = passed.handle
    one = tf.constant(1, tf.int64)

    def count(*example):
        with tf.control_dependencies([tf.raw_ops.AssignAddVariableOp(resource=handle, value=one)]):
            return tuple(tf.identity(x) if isinstance(x, tf.Tensor) else x for x in example)

    return dataset.apply(tf.data.experimental.ignore_errors(log_warning=True)).map(count)


def _batch_size_value(batch_size, what: str):
    if isinstance(batch_size, tf.Tensor):
        static = tf.get_static_value(batch_size)
        if static is not None:
            return int(static)
        try:
            capture_lib.capture([batch_size], f"{what} batch_size")
        except errors.CaptureError as e:
            raise errors.CaptureError(
                f"{what}: batch_size is fed through a placeholder; a tf.data pipeline fixes its "
                "batch size when it starts. Use a constant or a variable set before start. "
                f"({e})"
            ) from None
        return tf.cast(batch_size, tf.int64)
    return int(batch_size)


@tracing.without_autograph
def _build(
    tensors_list: list,
    structure_source,
    batch_size,
    keep_input,
    *,
    what: str,
    default_name: str,
    capacity,
    enqueue_many: bool,
    shapes,
    dynamic_pad: bool,
    allow_smaller_final_batch: bool,
    name,
    shuffle: Optional[tuple] = None,  # (min_after_dequeue, seed)
    num_threads: int = 1,
):
    if tf.executing_eagerly():
        # Legacy batchers raise ValueError here (producers and readers raise RuntimeError).
        raise ValueError(
            f"{what} builds a graph-mode input pipeline and eager execution is enabled: call "
            "tf.compat.v1.disable_eager_execution() first, or use tf.data directly in "
            "TensorFlow 2 code."
        )
    structure = _structure(structure_source, what)
    flat_lists = [structure.flatten(t) for t in tensors_list]
    all_inputs = [t for tl in flat_lists for t in tl if not isinstance(t, tf.SparseTensor)]
    with tf1.name_scope(name, default_name, all_inputs) as scope:
        if shuffle is not None and capacity <= shuffle[0]:
            raise ValueError(
                f"capacity {capacity} must be bigger than min_after_dequeue {shuffle[0]}."
            )
        if not flat_lists or not flat_lists[0]:
            raise ValueError(f"Expected at least one tensor in {default_name}().")
        flat_lists = [_convert(tl) for tl in flat_lists]
        keep = _keep_input(keep_input, enqueue_many)
        _dtypes(flat_lists)
        example_shapes = _shapes(flat_lists, shapes, enqueue_many, dynamic_pad)
        size = _batch_size_value(batch_size, what)
        lists = [_capture_list(tl, keep, what, example_shapes, enqueue_many) for tl in flat_lists]

        # Legacy order is one thread's order; parallel calls keep it (deterministic=True).
        parallel = {}
        if num_threads > 1 and _stateless(lists):
            parallel = {"num_parallel_calls": tf.data.AUTOTUNE, "deterministic": True}
        counters = None
        if options.bad_records == "skip":
            counters = _skip_counters()
            for item in lists:
                item.entered = counters[0]
            # One example at a time, so the counts are exact between runs.
            parallel = {}
        logs: list = []
        dataset = _combine(lists, what, parallel, logs)
        if counters is not None:
            dataset = _skipping(dataset, counters[1])
        keep_column = isinstance(keep, tf.Tensor) and keep.shape.ndims == 0
        if keep is False:
            dataset = dataset.filter(lambda *x: False)
        elif keep_column:
            dataset = dataset.filter(lambda *x: x[-1])
            if enqueue_many:
                dataset = dataset.map(lambda *x: x[:-1])
                keep_column = False
        if enqueue_many:
            dataset = dataset.unbatch()
        buffer = 0
        if shuffle is not None:
            min_after_dequeue, seed = shuffle
            buffer = capacity
            if isinstance(size, int):
                buffer = max(1, min(capacity, min_after_dequeue + size))
            dataset = dataset.shuffle(buffer, seed=seed)
        drop = not allow_smaller_final_batch
        if dynamic_pad:
            dataset = dataset.padded_batch(size, drop_remainder=drop)
        else:
            dataset = dataset.batch(size, drop_remainder=drop)
        if keep_column:
            dataset = dataset.map(lambda *x: x[:-1])  # Once per batch, not per example.
        # Legacy held at most `capacity` examples in its queue; so do the shuffle buffer and
        # the batches made ahead together.
        ahead = max(1, (capacity - buffer) // size) if isinstance(size, int) else tf.data.AUTOTUNE
        dataset = dataset.prefetch(ahead).with_options(_OPTIONS)

        if shuffle is not None:
            min_after_dequeue = shuffle[0]
            tag = f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full"
        else:
            tag = f"fraction_of_{capacity}_full"
        pipeline_lib.fill_summary(tag)

        finite = all(s.finite for item in lists for s in item.captured.sources) and all(
            item.captured.sources for item in lists
        )
        sources = [s for item in lists for s in item.captured.sources]
        source = pipeline_lib.Source(
            name=scope.rstrip("/"),
            dataset=dataset,
            finite=finite,
            serializable=all(s.serializable for s in sources),
            ops=tuple(op for item in lists for op in item.captured.ops)
            + tuple(op for s in sources for op in s.ops),
        )
        pipeline = source.make_pipeline()
        pipeline.origins = origins.Origins(
            suspects=[
                origins.Suspect(item.examples, item.captured.sources[0])
                for item in lists
                if len(item.captured.sources) == 1
            ],
            readers=list({id(s.reader): s.reader for s in sources if s.reader}.values()),
            logs=logs,
        )
        if counters is not None:
            pipeline.skip_counts = (counters[0].read_value(), counters[1].read_value())
        batch = pipeline.get_next(name=scope)
        flat = tf.nest.flatten(batch)  # One component: a bare element, not a tuple.
        source.register(tf.nest.flatten(flat, expand_composites=True))
        if not allow_smaller_final_batch and isinstance(size, int):
            for t in flat:
                if not isinstance(t, tf.SparseTensor):
                    t.set_shape(tf.TensorShape([size]).concatenate(t.shape[1:]))
        return structure.restore(flat)


def batch(
    tensors,
    batch_size,
    num_threads=1,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.batch`.

    Differences: served by tf.data; with `num_threads > 1` the order is that of one thread
    (legacy order depended on thread timing); `shared_name` is ignored.
    """
    del shared_name
    return _build(
        [tensors],
        tensors,
        batch_size,
        True,
        what="batch",
        default_name="batch",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        num_threads=num_threads,
    )


def maybe_batch(
    tensors,
    keep_input,
    batch_size,
    num_threads=1,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_batch`.

    Differences: as `batch`; dropped examples are filtered out by tf.data.
    """
    del shared_name
    return _build(
        [tensors],
        tensors,
        batch_size,
        keep_input,
        what="maybe_batch",
        default_name="batch",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        num_threads=num_threads,
    )


def batch_join(
    tensors_list,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.batch_join`.

    Differences: the lists take turns in a fixed order (legacy interleaved them by thread
    timing); readers over one producer read files side by side; `shared_name` is ignored.
    """
    del shared_name
    return _join(
        tensors_list,
        batch_size,
        True,
        "batch_join",
        "batch_join",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
    )


def maybe_batch_join(
    tensors_list,
    keep_input,
    batch_size,
    capacity=32,
    enqueue_many=False,
    shapes=None,
    dynamic_pad=False,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_batch_join`.

    Differences: as `batch_join`.
    """
    del shared_name
    return _join(
        tensors_list,
        batch_size,
        keep_input,
        "maybe_batch_join",
        "batch_join",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=dynamic_pad,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
    )


def shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    num_threads=1,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.shuffle_batch`.

    Differences: a `Dataset.shuffle` buffer of `min_after_dequeue + batch_size` (at most
    `capacity`) replaces the RandomShuffleQueue; with a `seed` the batches are reproducible,
    even with `num_threads > 1` (legacy's were not); `shared_name` is ignored.
    """
    del shared_name
    return _build(
        [tensors],
        tensors,
        batch_size,
        True,
        what="shuffle_batch",
        default_name="shuffle_batch",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
        num_threads=num_threads,
    )


def maybe_shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    num_threads=1,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_shuffle_batch`.

    Differences: as `shuffle_batch`.
    """
    del shared_name
    return _build(
        [tensors],
        tensors,
        batch_size,
        keep_input,
        what="maybe_shuffle_batch",
        default_name="shuffle_batch",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
        num_threads=num_threads,
    )


def shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.shuffle_batch_join`.

    Differences: as `batch_join` and `shuffle_batch`.
    """
    del shared_name
    return _join(
        tensors_list,
        batch_size,
        True,
        "shuffle_batch_join",
        "shuffle_batch_join",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
    )


def maybe_shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    seed=None,
    enqueue_many=False,
    shapes=None,
    allow_smaller_final_batch=False,
    shared_name=None,
    name=None,
):
    """Drop-in replacement for `tf.compat.v1.train.maybe_shuffle_batch_join`.

    Differences: as `batch_join` and `shuffle_batch`.
    """
    del shared_name
    return _join(
        tensors_list,
        batch_size,
        keep_input,
        "maybe_shuffle_batch_join",
        "shuffle_batch_join",
        capacity=capacity,
        enqueue_many=enqueue_many,
        shapes=shapes,
        dynamic_pad=False,
        allow_smaller_final_batch=allow_smaller_final_batch,
        name=name,
        shuffle=(min_after_dequeue, seed),
    )


def _join(tensors_list, batch_size, keep_input, what, default_name, **kwargs):
    if not isinstance(tensors_list, (list, tuple)) or not tensors_list:
        raise ValueError(f"Expected at least one input in {default_name}().")
    first = tensors_list[0]
    if isinstance(first, dict):
        keys = set(first)
        if any(set(t) != keys for t in tensors_list):
            raise ValueError("All dictionaries in tensors_list must have the same keys")
    return _build(
        list(tensors_list),
        first,
        batch_size,
        keep_input,
        what=what,
        default_name=default_name,
        # Legacy ran one enqueue thread per list.
        num_threads=len(tensors_list),
        **kwargs,
    )
