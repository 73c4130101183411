"""Restoring a checkpoint that lacks an input position this graph saves.

Legacy's Saver restored a checkpoint into any graph whose variables it held. A checkpoint
written by legacy code, with positions off, or by a graph with other inputs (a training
checkpoint restored into an evaluation graph) lacks some positions this graph's Saver saves
(checkpoint.py): its variables are restored, and those inputs are left where they are (at
the start, where they have not started), said once.
"""

import logging
import os
import weakref

import numpy as np
import tensorflow as tf

from compat_input._src.core import tf_internals
from compat_input._src.runtime import position_costs
from compat_input._src.runtime.checkpoint import positions

tf1 = tf.compat.v1
logger = logging.getLogger("compat_input")


def _positions_missing(saved: list, save_path: str) -> tuple:
    """Those of the positions a Saver saves (`saved`) that the checkpoint lacks, the
    checkpoint's reader and its dtype map (name -> dtype); `([], None, {})` if it cannot be
    read."""
    try:
        reader = tf.train.load_checkpoint(save_path)
    except (tf.errors.OpError, ValueError):
        return [], None, {}
    held = reader.get_variable_to_dtype_map()
    missing = [item for item in saved if any(spec.name not in held for spec in item.specs)]
    return missing, reader, held


# Variables fed rather than read by the restore op are all held in memory at once: beyond
# this, the second Saver's ops cost less than the memory.
_MOST_FED_BYTES = 1 << 30

# Saver -> its RestoreV2 ops (found once: an evaluation loop restores each new checkpoint).
_restore_ops: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _fed_restore(saver, sess, reader, held: dict, missing: list):
    """`sess`, its runs fed what the Saver's own restore reads: the checkpoint's values
    (`held`: its dtype map, as `_positions_missing` read it), and
    for each position it lacks, the one the input is at (the start, where it has not
    started), so that the restore leaves that input where it is; None where a feed cannot
    stand for the read (sliced variables, a key or type the checkpoint does not hold: the
    Saver's own restore then says what is wrong).

    A Saver built without those positions did the same, at the cost of a second Saver's
    ops: 281 for pix2pix's small generator, 0.46 s of its test run's 6.4 s, in every
    evaluation of a checkpoint written by training (its input is another).
    """
    if saver not in _restore_ops:
        scope = saver.saver_def.restore_op_name.rpartition("/")[0] + "/"
        _restore_ops[saver] = [
            op
            for op in sess.graph.get_operations()
            if op.type == "RestoreV2" and op.name.startswith(scope)
        ]
    shapes = reader.get_variable_to_shape_map()
    specs = {spec.name: spec for item in missing for spec in item.specs}
    read, own = {}, {}
    for op in _restore_ops[saver]:
        names, slices = (tf.get_static_value(t) for t in op.inputs[1:3])
        if names is None or slices is None or any(slices):
            return None
        for name, output in zip((n.decode() for n in names), op.outputs):
            if name in specs:
                own[output] = specs[name].tensor  # Made with the Saver's save: no new op.
            elif held.get(name) == output.dtype and output.dtype not in (tf.variant, tf.resource):
                read[output] = name
            else:
                return None
    size = sum(np.prod(shapes[n], dtype=np.int64) * held[n].size for n in read.values())
    if len(own) != len(specs) or size > _MOST_FED_BYTES:
        return None
    feeds = {output: reader.get_tensor(name) for output, name in read.items()}
    feeds.update(zip(own, sess.run(list(own.values()))))
    return _Fed(sess, feeds)


class _Fed:
    """A session whose runs are also fed `feeds`."""

    def __init__(self, sess, feeds: dict):
        self._sess, self._feeds = sess, feeds

    def run(self, fetches, feed_dict=None, **kwargs):
        return self._sess.run(fetches, {**self._feeds, **(feed_dict or {})}, **kwargs)

    def __getattr__(self, name):
        return getattr(self._sess, name)


def _without(var_list, missing: list):
    if isinstance(var_list, dict):
        return {k: v for k, v in var_list.items() if not any(v is m for m in missing)}
    return [v for v in var_list if not any(v is m for m in missing)]


# (checkpoint directory, input names) already named in a warning.
_said: set = set()


# Saver -> {the positions it lacks -> the Saver without them}: an evaluation loop restores
# each new checkpoint into one graph, which then gains one Saver, not one a checkpoint.
_fallbacks: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _fallback(saver, graph: tf.Graph, missing: list):
    made = _fallbacks.setdefault(saver, {})
    key = tuple(sorted(spec.name for m in missing for spec in m.specs))
    if key not in made:
        finalized = graph.finalized
        # MonitoredTrainingSession, the Supervisor and evaluators (im2txt's) finalize the
        # graph; the Saver without those positions is built, then it is finalized again.
        if finalized:
            tf_internals.unfinalize(graph)
        try:
            with graph.as_default():
                made[key] = tf1.train.Saver(
                    var_list=_without(tf_internals.saver_var_list(saver), missing),
                    max_to_keep=None,
                )
        finally:
            if finalized:
                graph.finalize()
    return made[key]


def tolerant_restore(restore):
    """`Saver.restore` that restores a checkpoint into any graph whose variables it holds,
    as legacy's did: an input whose position the checkpoint lacks (written by legacy code,
    with positions off, or by a graph with other inputs) starts from the beginning.
    Installed by `install()` (commands/install.py)."""

    def restore_without_positions_if_absent(self, sess, save_path):
        # The checkpoint's index is read first: a restore that failed on a missing position
        # had read the model's variables already, and the second said so again ("Restoring
        # parameters from" twice, Inception's 95 MB read twice, in every evaluator).
        held = positions(self) if save_path is not None else []
        missing, reader, dtypes = _positions_missing(held, save_path) if held else ([], None, {})
        if not missing:
            return restore(self, sess, save_path)
        names = sorted({position_costs.pipeline_of_key(m.specs[0].name) for m in missing})
        said = (os.path.dirname(os.path.abspath(save_path)), tuple(names))
        if said not in _said:  # Once: an evaluation hook restores each new checkpoint.
            _said.add(said)
            logger.warning(
                "compat_input: checkpoint %s holds no input position for %s (written by "
                "legacy code, with positions off, by another input of that name, or by a "
                "compat_input version that built that input otherwise); "
                "variables are restored and %s from the beginning (said once for the "
                "checkpoints of this directory).",
                save_path,
                ", ".join(f"'{n}'" for n in names),
                "that input starts" if len(names) == 1 else "those inputs start",
            )
        fed = _fed_restore(self, sess, reader, dtypes, missing)
        if fed is not None:
            return restore(self, fed, save_path)
        return restore(_fallback(self, sess.graph, missing), sess, save_path)

    restore_without_positions_if_absent.__wrapped__ = restore
    return restore_without_positions_if_absent


class Saver(tf1.train.Saver):
    """Drop-in replacement for `tf.compat.v1.train.Saver`.

    The one difference: `restore` also restores checkpoints that lack an input position
    this graph saves (written by legacy code, with positions off, or by a graph with other
    inputs: a training checkpoint restored into an evaluation graph), as legacy's Saver
    did; those inputs start from the beginning (`tolerant_restore`). `install()` gives
    every Saver this restore; a program on compat_input without it (a migrated one, whose
    `tf.train.Saver` the codemod makes this) needs the class. The default Saver of
    `compat_input.Supervisor`.
    """

    restore = tolerant_restore(tf1.train.Saver.restore)
