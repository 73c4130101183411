"""Probes: a batcher's per-example graph run again on given records, to find the one that
fails (origins.py names it).
"""

import tensorflow as tf

from compat_input._src import tf_internals
from compat_input._src import tracing

tf1 = tf.compat.v1


# More than the recent-records window (origins.py) holds: one batch takes every ordinal.
_WHOLE = 1 << 20

_PROBE_OPTIONS = tf.data.Options()
_PROBE_OPTIONS.autotune.enabled = False
_PROBE_OPTIONS.experimental_optimization.apply_default_optimizations = False


class Probe:
    """Runs one list's per-example graph on given source elements, one at a time.

    Made at the first error, in the program's graph (its variables and tables are the
    ones the examples need) and run in the session that raised it.
    """

    @tracing.without_autograph
    def __init__(self, examples, specs: list, key=None):
        # Made at the root of the graph, finalized or not (no public way to add the probe
        # after finalize()).
        with tf_internals.at_root(tf1.get_default_graph()), tf1.name_scope("compat_input_probe"):
            self._feeds = [
                tf1.placeholder(spec.dtype, tf.TensorShape([None]).concatenate(spec.shape))
                for spec in specs
            ]
            elements = tf.data.Dataset.from_tensor_slices(tuple(self._feeds))
            # The pipeline's own per-example function where it is shared (tracing.py):
            # nothing to trace for it now. An element that fails fails its pair, and the
            # pairs stay in step, so the ordinals that come out are those that passed.
            outputs = tracing.shared_map(elements, key, examples)
            ordinals = (
                tf.data.Dataset.zip((tf.data.Dataset.range(_WHOLE), outputs))
                .apply(tf.data.experimental.ignore_errors())
                .map(lambda ordinal, example: ordinal)
            )
            # Every ordinal that passed, as one vector (an empty one if none did), made and
            # read in one run: each run of a new signature costs the session an executor,
            # and an initializable iterator took three runs.
            nothing = tf.data.Dataset.from_tensors(tf.zeros([0], tf.int64))
            dataset = (
                ordinals.batch(_WHOLE)
                .concatenate(nothing)
                .take(1)
                # As every pipeline: no graph rewrites (pipeline.py).
                .with_options(_PROBE_OPTIONS)
            )
            self._passed = tf.data.experimental.get_single_element(dataset)

    def failing(self, run, sess, columns: list) -> list:
        """Indices of the elements (given as columns) whose per-example graph fails."""
        passed = set(run(sess, self._passed, dict(zip(self._feeds, columns))).tolist())
        return [i for i in range(len(columns[0])) if i not in passed]
