"""Deliberate bugs planted in compat_input's batching, to prove the oracle catches them.

`COMPAT_INPUT_MUTANT=<name> pytest tests/...` plants one (conftest.py); a suite that stays
green with a mutant planted cannot see that kind of bug. tests/test_mutants.py runs the
differential tests once per mutant and requires a failure each time. Each mutant wraps a
named step of batchers/plan_steps.py (or capture/vectorize.py), in compat_input only; the
legacy queues are never touched.
"""

import dataclasses

import tensorflow as tf

from compat_input._src.batchers import plan_steps
from compat_input._src.capture import vectorize


def _first_dense(batch: tuple) -> int:
    return next(i for i, t in enumerate(batch) if isinstance(t, tf.Tensor))


def _pairing(original):
    """Behind a shuffle, the first component of each batch moves down one row: every value
    is still delivered, but images no longer go with their labels."""

    def step(plan, dataset):
        dataset = original(plan, dataset)
        if plan.shuffle is None or len(tf.nest.flatten(dataset.element_spec)) < 2:
            return dataset

        def shift(*batch):
            i = _first_dense(batch)
            return batch[:i] + (tf.roll(batch[i], 1, axis=0),) + batch[i + 1 :]

        return dataset.map(shift)

    return step


def _order(original):
    """Without a shuffle, each batch comes reversed."""

    def step(plan, dataset):
        dataset = original(plan, dataset)
        if plan.shuffle is not None:
            return dataset
        return dataset.map(
            lambda *batch: tuple(
                tf.reverse(t, [0]) if isinstance(t, tf.Tensor) else t for t in batch
            )
        )

    return step


def _drop(original):
    """The third example is lost."""

    def step(plan, dataset):
        numbered = dataset.enumerate()
        return original(plan, numbered.filter(lambda i, x: tf.not_equal(i, 2)).map(lambda i, x: x))

    return step


def _duplicate(original):
    """The third example is delivered twice."""

    def step(plan, dataset):
        def twice_at_2(i, x):
            return tf.data.Dataset.from_tensors(x).repeat(
                tf.where(tf.equal(i, 2), tf.constant(2, tf.int64), 1)
            )

        return original(plan, dataset.enumerate().flat_map(twice_at_2))

    return step


def _epoch_end(original):
    """The final partial batch is lost, even with allow_smaller_final_batch."""

    def step(plan, dataset):
        dataset = original(plan, dataset)
        if not plan.allow_smaller_final_batch:
            return dataset
        return dataset.filter(
            lambda *batch: tf.equal(
                tf.shape(batch[_first_dense(batch)], out_type=tf.int64)[0],
                tf.cast(plan.size, tf.int64),
            )
        )

    return step


def _per_example(original):
    """No block is ever vectorized: the same examples, ten times slower (the silent slow
    path TF1 behaviour once took)."""

    def never(*args, **kwargs):
        raise vectorize.NotVectorized("planted: per example")

    return never


MUTANTS = {
    "pairing": (plan_steps, "batch_examples", _pairing),
    "order": (plan_steps, "batch_examples", _order),
    "drop": (plan_steps, "shuffle_examples", _drop),
    "duplicate": (plan_steps, "shuffle_examples", _duplicate),
    "epoch_end": (plan_steps, "batch_examples", _epoch_end),
    "per_example": (vectorize, "map_blocks", _per_example),
}


@dataclasses.dataclass
class Planted:
    name: str
    original: object

    def undo(self) -> None:
        module, step, _ = MUTANTS[self.name]
        _replace(module, step, self.original)


def _replace(module, step: str, new) -> None:
    # A plan's pipeline runs the steps listed in `plan_steps.STEPS`: replaced there too.
    old = getattr(module, step)
    setattr(module, step, new)
    plan_steps.STEPS = tuple(new if s is old else s for s in plan_steps.STEPS)


def plant(name: str) -> Planted:
    module, step, mutate = MUTANTS[name]
    original = getattr(module, step)
    _replace(module, step, mutate(original))
    return Planted(name, original)
