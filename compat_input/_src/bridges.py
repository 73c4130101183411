"""Bridges between legacy graph code and tf.data.

`from_dataset(dataset)` brings any tf.data (or TFDS) dataset into legacy graph code as
tensors that are started, reset and iterated like every other pipeline.
`as_dataset(tensors)` hands back the Dataset behind compat_input tensors.
"""

from typing import Any

import tensorflow as tf

from compat_input._src import iteration
from compat_input._src import pipeline as pipeline_lib

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


def as_dataset(tensors: Any) -> tf.data.Dataset:
    """The tf.data Dataset whose elements are `tensors` (outputs of one compat_input pipeline)."""
    pipelines = iteration.pipelines_behind(tensors)
    direct = [
        t for t in tf.nest.flatten(tensors, expand_composites=True) if pipeline_lib.lookup_source(t)
    ]
    if len(pipelines) != 1 or not direct:
        raise ValueError(
            "as_dataset: pass the tensors of one compat_input pipeline (a batch, a reader's "
            f"output); got tensors behind {len(pipelines)} pipelines."
        )
    return pipelines[0].dataset
