"""tf.data's dataset transformations made from their raw ops, their constants shared by
every pipeline of a graph.

`Dataset.batch`, `shuffle`, `prefetch` and the rest each make their own constants (a batch
makes two), and every op of a graph costs every session memory and its executors time; a
graph with 50 per-tower inputs made hundreds. Where an element is not dense (a
SparseTensor, a RaggedTensor), tf.data's own method is used.
"""

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core.state_variables import initial
from compat_input._src.core.tracing import attr
from compat_input._src.core.tracing import dense
from compat_input._src.core.tracing import trace_once
from compat_input._src.core.tracing import typed


def one_file(reader_op, path: tf.Tensor, **attrs) -> tf.data.Dataset:
    """The records of the file `path` as `reader_op` (a raw reader dataset op) reads them.

    tf.data's reader classes take a list of files through a flat_map: one more function
    for every pipeline to instantiate, for the one file a legacy reader reads at a time.
    """
    attrs.setdefault("compression_type", "")
    # Bytes read at a time: tf.data's readers' default.
    attrs.setdefault("buffer_size", tf.constant(256 * 1024, tf.int64))
    variant = reader_op(filenames=path, **attrs)
    return tf.data.experimental.from_variant(variant, tf.TensorSpec([], tf.string))


def enumerate_(dataset, flat: bool = False):
    """`dataset.enumerate()` in two dataset ops, the range's bounds shared by every pipeline
    of the graph (tf.data's makes six: its bounds, and a rewrite step we turn off).
    `flat`: elements `(i, *components)` instead of `(i, element)`."""
    spec = (tf.TensorSpec([], tf.int64), dataset.element_spec)
    if flat:
        spec = (spec[0], *tf.nest.flatten(spec[1]))
    start, stop, step = (initial(v, tf.int64) for v in (0, 2**63 - 1, 1))
    numbers = graph_ops.RangeDataset(
        start=start, stop=stop, step=step, output_types=[tf.int64], output_shapes=[[]]
    )
    variant = graph_ops.ZipDataset(input_datasets=[numbers, dataset._variant_tensor], **typed(spec))
    return tf.data.experimental.from_variant(variant, spec)


def batch(dataset, size, drop_remainder: bool = False):
    """`dataset.batch(size, drop_remainder)`, its constants shared by every pipeline of the
    graph (each op costs every session memory, and tf.data's batch makes two per call)."""
    spec = dataset.element_spec
    if not dense(tf.nest.flatten(spec)):
        return dataset.batch(size, drop_remainder=drop_remainder)
    static = size if isinstance(size, int) and drop_remainder else None
    batched = tf.nest.map_structure(
        lambda s: tf.TensorSpec(tf.TensorShape([static]).concatenate(s.shape), s.dtype), spec
    )
    variant = graph_ops.BatchDatasetV2(
        input_dataset=dataset._variant_tensor,
        batch_size=initial(size, tf.int64) if isinstance(size, int) else size,
        drop_remainder=initial(drop_remainder, tf.bool),
        **typed(batched),
    )
    return tf.data.experimental.from_variant(variant, batched)


def repeated(tensor: tf.Tensor, count: int) -> tf.data.Dataset:
    """`Dataset.from_tensors(tensor).repeat(count)`, the count shared by the graph."""
    spec = tf.TensorSpec(tensor.shape, tensor.dtype)
    one = graph_ops.TensorDataset(components=[tensor], output_shapes=[tensor.shape])
    variant = graph_ops.RepeatDataset(
        input_dataset=one, count=initial(count, tf.int64), **typed(spec)
    )
    return tf.data.experimental.from_variant(variant, spec)


def shuffle(dataset, buffer_size: int, seed=None, drawn=None):
    """`dataset.shuffle(buffer_size, seed)`, its constants shared by the graph; the seeds
    are tf.data's own (the graph's seed and `seed`, as `tf.compat.v1.get_seed` gives them),
    or `drawn`, a (seed, seed2) pair drawn already."""
    spec = dataset.element_spec
    graph = tf.compat.v1.get_default_graph()
    if not dense(tf.nest.flatten(spec)) or getattr(graph, "building_function", False):
        return dataset.shuffle(buffer_size, seed=seed)  # In a function, tf.data's V3 op.
    seed, seed2 = drawn if drawn is not None else tf.compat.v1.get_seed(seed)
    if seed2 is not None and not seed and not seed2:
        seed2 = 2**31 - 1  # tf.data's: both 0 would mean "random".
    seed, seed2 = seed or 0, seed2 or 0
    variant = graph_ops.ShuffleDataset(
        input_dataset=dataset._variant_tensor,
        buffer_size=initial(buffer_size, tf.int64),
        seed=initial(seed, tf.int64),
        seed2=initial(seed2, tf.int64),
        reshuffle_each_iteration=True,
        **typed(spec),
    )
    return tf.data.experimental.from_variant(variant, spec)


def prefetch(dataset, buffer_size: int):
    """`dataset.prefetch(buffer_size)`, its constant shared by every pipeline of the graph."""
    if not dense(tf.nest.flatten(dataset.element_spec)):
        return dataset.prefetch(buffer_size)
    variant = graph_ops.PrefetchDataset(
        input_dataset=dataset._variant_tensor,
        buffer_size=initial(buffer_size, tf.int64),
        **typed(dataset.element_spec),
    )
    return tf.data.experimental.from_variant(variant, dataset.element_spec)


def unbatch(dataset):
    """`dataset.unbatch()` without the identity map it adds, where every part is dense."""
    spec = dataset.element_spec
    if not dense(tf.nest.flatten(spec)):
        return dataset.unbatch()
    unbatched = tf.nest.map_structure(lambda s: tf.TensorSpec(s.shape[1:], s.dtype), spec)
    variant = graph_ops.UnbatchDataset(input_dataset=dataset._variant_tensor, **typed(unbatched))
    return tf.data.experimental.from_variant(variant, unbatched)


# tf.data's own `scan` and `filter` trace their functions for the multi-device path, which
# gives each a Grappler pass as its pipeline first runs (youtube-8m's shape's first batch
# waited 13 ms for the TFRecord keys' scan); traced as ours (tracing.trace_once, for one
# pipeline), a function is instantiated on its device, as the session's rewrite left it.


def components(fn):
    """`fn` of a tuple element's components, as tf.data's own methods call it, for a
    function traced as ours, which takes the element whole."""
    return lambda element: fn(*element) if isinstance(element, tuple) else fn(element)


def scan(dataset, initial_state: tf.Tensor, fn) -> tf.data.Dataset:
    """`dataset.scan(initial_state, fn)`, for a tensor state of a shape `fn` keeps."""
    state = tf.TensorSpec(initial_state.shape, initial_state.dtype)
    traced = trace_once(None, components(fn), (state, dataset.element_spec), [])
    if traced is None or traced[2][0] != state:
        return dataset.scan(initial_state, fn)
    concrete, inputs, (_, spec) = traced
    variant = graph_ops.ScanDataset(
        input_dataset=dataset._variant_tensor,
        initial_state=[initial_state],
        other_arguments=inputs,
        f=attr(concrete),
        preserve_cardinality=True,
        use_default_device=True,
        **typed(spec),
    )
    return tf.data.experimental.from_variant(variant, spec)


def filter_(dataset, predicate) -> tf.data.Dataset:
    """`dataset.filter(predicate)`, `predicate` taking a tuple element's components."""
    spec = dataset.element_spec
    traced = trace_once(None, components(predicate), spec, [])
    if traced is None:
        return dataset.filter(predicate)
    concrete, inputs, _ = traced
    variant = graph_ops.FilterDataset(
        input_dataset=dataset._variant_tensor,
        other_arguments=inputs,
        predicate=attr(concrete),
        **typed(spec),
    )
    return tf.data.experimental.from_variant(variant, spec)
