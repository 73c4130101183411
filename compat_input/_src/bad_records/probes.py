"""Probes: a batcher's per-example graph run again on given records, to find the one that
fails (origins.py names it).
"""

import tensorflow as tf

from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.runtime import iterators

tf1 = tf.compat.v1


# More than the recent-records window (origins.py) holds: one batch takes every ordinal.
_WHOLE = 1 << 20


def fingerprints(examples) -> tf.Tensor:
    """One fingerprint per example of a batch (dense components), `[n, 8 * components]`.

    A batcher keeps its last example's (batchers/batch_plan.py) and a probe computes every
    example's, so that the examples a failed batch had gathered can be found among the
    records read (origins.Suspect.final_batch).
    """
    parts = [tf.fingerprint(c) for c in examples]  # Each example's bytes, whatever its shape.
    return parts[0] if len(parts) == 1 else tf.concat(parts, axis=1)


class Probe:
    """Runs one list's per-example graph on given source elements, one at a time.

    Made at the first error, in the program's graph (its variables and tables are the
    ones the examples need) and run in the session that raised it. Where the examples
    are dense and of one shape, and `values` asks for them, a run also returns each passing
    example's fingerprint and value, for the final partial batch
    (origins.Suspect.final_batch).
    """

    @tracing.without_autograph
    def __init__(self, examples, specs: list, key=None, values: bool = False):
        # Made at the root of the graph, finalized or not (no public way to add the probe
        # after finalize()).
        with tf_internals.at_root(tf1.get_default_graph()), tf1.name_scope("compat_input_probe"):
            self._feeds = [
                tf1.placeholder(spec.dtype, tf.TensorShape([None]).concatenate(spec.shape))
                for spec in specs
            ]
            elements = tf.data.Dataset.from_tensor_slices(tuple(self._feeds))
            # The pipeline's own per-example function where it is shared (core/tracing.py):
            # nothing to trace for it now. An element that fails fails its pair, and the
            # pairs stay in step, so the ordinals that come out are those that passed.
            outputs = tracing.shared_map(elements, key, examples, program=True)
            flat = tf.nest.flatten(outputs.element_spec, expand_composites=True)
            # Made only where asked: each op more is sent to the session before the probe runs.
            self.has_values = values and all(
                isinstance(s, tf.TensorSpec) and s.shape.is_fully_defined() for s in flat
            )
            passed = tf.data.Dataset.zip((tf.data.Dataset.range(_WHOLE), outputs)).ignore_errors()
            self._passed = self._all(passed.map(lambda ordinal, example: ordinal))
            self._with_values = None
            if self.has_values:
                with_values = passed.map(
                    lambda ordinal, example: (ordinal, tuple(tf.nest.flatten(example)))
                )
                self._with_values = self._all(with_values, fingerprinted=True)

    @staticmethod
    def _all(dataset: tf.data.Dataset, fingerprinted: bool = False):
        # Every element that passed, as one batch (an empty one if none did), made and
        # read in one run: each run of a new signature costs the session an executor,
        # and an initializable iterator took three runs.
        batches = dataset.batch(_WHOLE)
        if fingerprinted:
            batches = batches.map(lambda ordinals, ex: (ordinals, fingerprints(ex), ex))
        empty = tf.nest.map_structure(  # An empty batch of the same structure.
            lambda s: tf.zeros([0] + s.shape[1:].as_list(), s.dtype), batches.element_spec
        )
        dataset = (
            batches.concatenate(tf.data.Dataset.from_tensors(empty))
            .take(1)
            # As every pipeline: no tuning, no graph rewrites.
            .with_options(iterators.OPTIONS)
        )
        return tf.data.experimental.get_single_element(dataset)

    def failing(self, run, sess, columns: list, values: bool = False):
        """Indices of the elements (given as columns) whose per-example graph fails.

        With `values` (where `has_values`), also `{index: (fingerprint, example)}` of those
        that pass, each example a list of its components' values.
        """
        feeds = dict(zip(self._feeds, columns))
        if values and self.has_values:
            ordinals, prints, examples = run(sess, self._with_values, feeds)
            passed = {
                int(o): (prints[n].tobytes(), [c[n] for c in examples])
                for n, o in enumerate(ordinals)
            }
        else:
            passed = dict.fromkeys(run(sess, self._passed, feeds).tolist())
        failed = [i for i in range(len(columns[0])) if i not in passed]
        if not values:
            return failed
        return failed, (passed if self.has_values else {})
