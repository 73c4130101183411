"""Bridges between legacy graph code and tf.data.

`from_dataset(dataset)` brings any tf.data (or TFDS) dataset into legacy graph code as
tensors that are started, reset and iterated like every other pipeline.
`as_dataset(tensors)` hands back the Dataset behind compat_input tensors.
"""

from typing import Any

import tensorflow as tf

from compat_input._src.core import tracing
from compat_input._src.runtime import iteration
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import start_ops

tf1 = tf.compat.v1


def from_dataset(dataset: tf.data.Dataset, name: str = "from_dataset", finite: bool = True) -> Any:
    """Legacy-style tensors over `dataset`: each `sess.run` pulls one element.

    Returns the dataset's element structure. Started by `start_queue_runners` (or a
    Supervisor, MonitoredTrainingSession); usable as input to the legacy batchers.
    """
    pipeline_lib.check_graph_mode("from_dataset")
    with tf1.name_scope(name) as scope:
        source = pipeline_lib.Source(name=scope.rstrip("/"), dataset=dataset, finite=finite)
        element = source.make_pipeline().get_next()
    source.register(tf.nest.flatten(element, expand_composites=True))
    return element


def as_dataset(tensors: Any, sess=None) -> tf.data.Dataset:
    """The tf.data Dataset whose elements are `tensors` (the outputs of compat_input input).

    In graph code it is the pipeline's own Dataset, for an iterator of your own. Called
    eagerly (TensorFlow 2, the legacy input built under `with tf.Graph().as_default()`),
    it is a Dataset that runs the legacy graph: iterate it or pass it to `model.fit`. Its
    session is `sess`, or a private one that initializes the graph's variables and starts
    its pipelines; each element is one `sess.run(tensors)`, until OutOfRangeError, and
    each pass over it (each epoch of `model.fit`) starts the input from its beginning.
    """
    if tf.executing_eagerly():
        return _eager_dataset(tensors, sess)
    pipelines = iteration.pipelines_behind(tensors)
    direct = [
        t for t in tf.nest.flatten(tensors, expand_composites=True) if pipeline_lib.lookup_source(t)
    ]
    if len(pipelines) != 1 or not direct:
        raise ValueError(
            "as_dataset: pass the tensors of one compat_input pipeline (a batch, a reader's "
            f"output); got tensors behind {len(pipelines)} pipelines."
        )
    # Our state (reader counters, error logs) is initialized by the Dataset itself, since
    # nothing of ours starts the user's own iterator.
    return self_initializing(pipelines[0].dataset, direct[0].graph)


def _eager_dataset(tensors: Any, sess) -> tf.data.Dataset:
    flat = tf.nest.flatten(tensors)
    if not flat or any(not isinstance(t, tf.Tensor) for t in flat):
        raise ValueError(
            "as_dataset: eagerly, pass dense tensors of a legacy graph (SparseTensors are not "
            f"supported here); got {tensors!r}."
        )
    graph = flat[0].graph
    if sess is None:
        with graph.as_default():
            init = [tf1.global_variables_initializer(), tf1.local_variables_initializer()]
        sess = tf1.Session(graph=graph)
        sess.run(init)
    pipeline_lib.start_pipelines(sess, graph)
    run = sess.make_callable(flat)

    def generate():
        # Each pass over the Dataset (each epoch of model.fit) reads the input from the start.
        iteration.reset(sess, flat)
        while True:
            try:
                yield tuple(run())
            except tf.errors.OutOfRangeError:
                return

    specs = tuple(tf.TensorSpec(t.shape, t.dtype) for t in flat)
    dataset = tf.data.Dataset.from_generator(generate, output_signature=specs)
    return dataset.map(lambda *values: tf.nest.pack_sequence_as(tensors, list(values)))


@tracing.without_autograph
def self_initializing(dataset: tf.data.Dataset, graph: tf.Graph) -> tf.data.Dataset:
    """`dataset`, first initializing the state variables of `graph` that are not yet.

    For a Dataset handed to the user's own iterator, which nothing of ours starts.
    """
    groups = pipeline_lib.state_groups(graph)
    if not groups:
        return dataset

    def initialize(_):
        done = None
        for group in groups:
            done = start_ops.initialize_missing(group.variables, done)
        with tf.control_dependencies([done]):
            return tf.constant(0)

    return tf.data.Dataset.from_tensors(0).map(initialize).flat_map(lambda _: dataset)
