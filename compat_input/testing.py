"""Prove in your own test suite that your TF1 input code gives the same examples on
compat_input as on TensorFlow's own queues.

    from compat_input import testing

    def test_the_training_input_is_unchanged():
        testing.assert_same_input(my_project.train_inputs, steps=50)

    def test_the_shuffled_input_holds_the_same_examples():
        testing.assert_same_input(my_project.shuffled_inputs, shuffled=True)

`build` is your input code as it is: a function of no arguments that builds the input in
the default graph with `tf.compat.v1.train.*` / `tf.compat.v1.TextLineReader` / ... and
returns what a training step fetches (a batch: a tensor, or a tuple or dict of them). It
runs twice, each time in a fresh graph and session: on TensorFlow's own queues, and with
`compat_input.install()` in force, which serves those same names from tf.data. Whole
examples are compared (an image together with its label): in order where the input is
deterministic (`shuffle=False`, one thread), as multisets of the whole input where it
shuffles.
"""

import collections
import dataclasses
from collections.abc import Callable
from typing import Any
from typing import Optional

import numpy as np
import tensorflow as tf

from compat_input._src.commands import install as install_lib
from compat_input._src.core import patching

tf1 = tf.compat.v1

__all__ = ["InputRun", "run_input", "examples", "assert_same_input"]


@dataclasses.dataclass
class InputRun:
    """What one run of the input delivered."""

    # Each step's `sess.run(fetches)`, as NumPy values in the fetches' structure.
    batches: list
    # The error type that ended the run (OutOfRangeError: the input ended), or None when
    # `steps` ran out first.
    error: Optional[type]
    message: str = ""


def run_input(
    build: Callable[[], Any], *, steps: int = 100, compat: bool = True, seed: int = 0
) -> InputRun:
    """Runs `build()`'s fetches up to `steps` times, or to the end of the input.

    `compat=True` runs it with `compat_input.install()` in force, `False` on TensorFlow's
    own queues; the install state is restored after. Variables (global and local) and
    tables are initialized and queue runners started as a TF1 program would.
    """
    was_installed = patching.installed()
    if compat and not was_installed:
        install_lib.install()
    elif not compat and was_installed:
        install_lib.uninstall()
    try:
        with tf.Graph().as_default():
            tf1.set_random_seed(seed)
            fetches = build()
            init = [
                tf1.global_variables_initializer(),
                tf1.local_variables_initializer(),
                tf1.tables_initializer(),
            ]
            with tf1.Session() as sess:
                sess.run(init)
                coord = tf1.train.Coordinator()
                threads = tf1.train.start_queue_runners(sess, coord=coord)
                run = InputRun([], None)
                for _ in range(steps):
                    try:
                        run.batches.append(sess.run(fetches))
                    except tf.errors.OpError as error:
                        run.error, run.message = type(error), error.message
                        break
                coord.request_stop()
                try:
                    coord.join(threads, stop_grace_period_secs=10)
                except tf.errors.OpError:
                    pass  # Legacy runner threads re-raise their error here; it is in `run`.
        return run
    finally:
        if compat and not was_installed:
            install_lib.uninstall()
        elif not compat and was_installed:
            install_lib.install()


def _key(value: Any) -> tuple:
    array = np.asarray(value)
    if array.dtype == object:
        return ("object", array.shape, tuple(array.ravel().tolist()))
    return (array.dtype.str, array.shape, array.tobytes())


def examples(run: InputRun) -> list:
    """The whole examples of a run, each a tuple of its components' hashable keys.

    Every component of a batch is split along its first axis and the rows paired, so an
    example is its image and its label together. A step whose components have no batch
    axis (a reader's `(key, value)`) is one example.
    """
    return [example for batch in run.batches for example in _batch_examples(batch)]


def _batch_examples(batch: Any) -> list:
    parts = [np.asarray(p) for p in tf.nest.flatten(batch)]
    sizes = {len(p) for p in parts if p.ndim}
    if not parts or any(p.ndim == 0 for p in parts) or len(sizes) != 1:
        return [tuple(_key(p) for p in parts)]  # No common batch axis: one example.
    return [tuple(_key(p[i]) for p in parts) for i in range(sizes.pop())]


def _show(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def assert_same_input(
    build: Callable[[], Any], *, steps: int = 100, shuffled: bool = False, seed: int = 0
) -> tuple:
    """Asserts that `build()` delivers the same examples on compat_input as on legacy
    queues; returns the two runs `(legacy, compat)`.

    Without `shuffled`: the same batches in the same order, and the same end. With
    `shuffled=True`: the same multiset of whole examples over the whole input, which
    must end within `steps` (build it with `num_epochs`): legacy's shuffle is not
    reproducible, so only whole epochs can be compared.
    """
    legacy = run_input(build, steps=steps, compat=False, seed=seed)
    compat = run_input(build, steps=steps, compat=True, seed=seed)
    if shuffled:
        ended = [r for r in (legacy, compat) if r.error is tf.errors.OutOfRangeError]
        if len(ended) != 2:
            raise AssertionError(
                f"assert_same_input(shuffled=True): the input did not end within {steps} "
                "steps on both sides; build it with num_epochs (and raise `steps`) so that "
                "whole epochs are compared."
            )
        want = collections.Counter(examples(legacy))
        got = collections.Counter(examples(compat))
        if want != got:
            raise AssertionError(
                f"the shuffled input differs: {sum((want - got).values())} example(s) legacy "
                f"delivered are missing on compat_input, e.g. {_show(list(want - got)[:1])}; "
                f"{sum((got - want).values())} extra, e.g. {_show(list(got - want)[:1])}"
            )
        return legacy, compat
    for index, (a, b) in enumerate(zip(legacy.batches, compat.batches)):
        if _batch_examples(a) != _batch_examples(b):
            raise AssertionError(
                f"batch {index} differs:\n  legacy:       {_show(a)}\n  compat_input: {_show(b)}"
            )
    if len(legacy.batches) != len(compat.batches) or legacy.error is not compat.error:
        raise AssertionError(
            f"legacy delivered {len(legacy.batches)} batches and ended with "
            f"{getattr(legacy.error, '__name__', None)}; compat_input delivered "
            f"{len(compat.batches)} and ended with {getattr(compat.error, '__name__', None)}"
            + (f": {compat.message.splitlines()[0]}" if compat.message else "")
        )
    return legacy, compat
