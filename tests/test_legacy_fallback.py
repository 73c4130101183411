"""An input compat_input cannot serve runs on TensorFlow's own queues, as legacy ran it.

Never an error where legacy runs: each batcher kind, made unservable (a planted failure in
its plan, or a real limit), gives what legacy gives, is named in `legacy_fallback.kept`,
and leaves the program's later random ops on legacy's seeds. conftest.py checks the other
way round for the whole suite: no servable batcher falls back unsaid.
"""

import pytest
import tensorflow as tf

import compat_input
from compat_input._src.batchers import batch_plan
from compat_input._src.batchers import legacy_fallback
from compat_input._src.capture import op_kinds
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import legacy_api
from helpers import started
from helpers import stop

tf1 = tf.compat.v1

pytestmark = pytest.mark.falls_back


def _counted(api, n=12):
    return api.range_input_producer(n, num_epochs=1, shuffle=False).dequeue()


def _example(api):
    x = _counted(api)
    return [x, tf.strings.as_string(x)]


# Each batcher kind, one thread: legacy's order is its one order.
_IN_ORDER = {
    "batch": lambda api: api.batch(_example(api), 5, allow_smaller_final_batch=True),
    "maybe_batch": lambda api: api.maybe_batch(
        _example(api), True, 5, allow_smaller_final_batch=True
    ),
    "batch_join": lambda api: api.batch_join([_example(api)], 5, allow_smaller_final_batch=True),
    "maybe_batch_join": lambda api: api.maybe_batch_join(
        [_example(api)], True, 5, allow_smaller_final_batch=True
    ),
}
_SHUFFLED = {
    "shuffle_batch": lambda api: api.shuffle_batch(
        _example(api), 5, 10, 2, seed=3, allow_smaller_final_batch=True
    ),
    "maybe_shuffle_batch": lambda api: api.maybe_shuffle_batch(
        _example(api), 5, 10, 2, True, seed=3, allow_smaller_final_batch=True
    ),
    "shuffle_batch_join": lambda api: api.shuffle_batch_join(
        [_example(api)], 5, 10, 2, seed=3, allow_smaller_final_batch=True
    ),
    "maybe_shuffle_batch_join": lambda api: api.maybe_shuffle_batch_join(
        [_example(api)], 5, 10, 2, True, seed=3, allow_smaller_final_batch=True
    ),
}


@pytest.fixture
def unservable(monkeypatch):
    """Every batcher's plan fails as a graph tf.data cannot run would."""

    def planted(*args, what, **kwargs):
        raise compat_input.CaptureError(f"{what}: planted unservable op")

    monkeypatch.setattr(batch_plan, "plan", planted)


@pytest.mark.parametrize("kind", sorted(_IN_ORDER))
def test_an_unservable_batcher_gives_what_legacy_gives(kind, unservable):
    before = len(legacy_fallback.kept)
    assert_same(_IN_ORDER[kind])
    said = legacy_fallback.kept[before:]
    assert len(said) == 1 and said[0].startswith(f"{kind} '")
    assert "planted unservable op" in said[0]


@pytest.mark.parametrize("kind", sorted(_SHUFFLED))
def test_an_unservable_shuffling_batcher_gives_legacy_s_examples(kind, unservable):
    before = len(legacy_fallback.kept)
    assert_same_examples(_SHUFFLED[kind], epoch_size=12)
    assert [line.split(" ")[0] for line in legacy_fallback.kept[before:]] == [kind]


def test_the_fallback_s_outputs_keep_legacy_s_names(unservable):
    legacy, compat = differential(lambda api: api.batch(_example(api), 5, name="my_input"), steps=1)
    with tf.Graph().as_default():
        batch = compat_input.batch(_example(compat_input), 5, name="my_input")
    assert [t.name for t in batch] == ["my_input:0", "my_input:1"]
    assert compat.values == legacy.values


def test_a_fallback_after_a_seed_was_drawn_leaves_later_ops_on_legacy_s_seeds(monkeypatch):
    # The shuffle draws its op seed as the pipeline is assembled; failing after that, the
    # legacy queue draws it again, and every random op after it must get legacy's seed.
    assemble = batch_plan.assemble

    def fails_after_drawing(plan, logs):
        assemble(plan, logs)
        raise compat_input.CaptureError("planted after the seed")

    monkeypatch.setattr(batch_plan, "assemble", fails_after_drawing)

    def build(api):
        tf1.set_random_seed(5)
        batch = api.shuffle_batch(_example(api), 4, 10, 2)
        return [tf.shape(batch[0]), tf1.random_uniform([3])]

    assert_same(build, steps=1)


def test_lists_that_share_some_sources_run_on_legacy_queues():
    # A real limit: joins.choose has no strategy for lists sharing part of their sources.
    # Which list takes which `a` is legacy's thread timing: each `a` once, either way.
    def build(api):
        a, b = _counted(api, 8), _counted(api, 8)
        return api.batch_join([[a, a * 0], [a, b * 0 + 1]], 4, allow_smaller_final_batch=True)

    before = len(legacy_fallback.kept)
    legacy, compat = differential(build)
    assert compat.error == legacy.error == tf.errors.OutOfRangeError
    taken = sorted(x for step in compat.values for x in step[0])
    assert taken == sorted(x for step in legacy.values for x in step[0]) == list(range(8))
    assert "share some sources but not all" in " ".join(legacy_fallback.kept[before:])


def test_a_sparse_tensor_batched_by_a_fed_size_runs_on_legacy_queues():
    def build(api):
        x = _counted(api, 7)
        sparse = tf.SparseTensor([[0]], tf.expand_dims(x, 0), [3])
        return api.batch(
            [x, sparse],
            tf1.placeholder(tf.int32, [], name="size"),
            allow_smaller_final_batch=True,
        )

    before = len(legacy_fallback.kept)
    assert_same(build, feed=lambda step: {"size:0": 2 + step % 2})
    assert "batches SparseTensors" in " ".join(legacy_fallback.kept[before:])


def test_an_op_without_a_cpu_kernel_runs_on_legacy_queues_where_its_device_has_one(monkeypatch):
    # A GPU-only kernel (this machine has no GPU): AsString said to lack a CPU kernel, the
    # host CPU being where tf.data runs input. Legacy's runner ran it on its device.
    monkeypatch.setattr(op_kinds, "has_cpu_kernel", lambda op: op.type != "AsString")
    before = len(legacy_fallback.kept)
    assert_same(lambda api: api.batch(_example(api), 5, allow_smaller_final_batch=True))
    assert "(AsString, created at" in " ".join(legacy_fallback.kept[before:])


def _first_error(api):
    """The error a program batching a uint8 MatMul stops with (MatMul has no uint8 kernel
    on the CPU, nor on a GPU), or None."""
    with tf.Graph().as_default():
        x = tf.cast(tf.reshape(_counted(api, 4), [1, 1]), tf.uint8)
        batch = api.batch([tf.raw_ops.MatMul(a=x, b=x)], 2)
        with tf1.Session() as sess:
            try:
                sess.run(tf1.local_variables_initializer())
                coord, threads = started(sess)
                sess.run(batch)
                stop(coord, threads)
            except tf.errors.OpError as error:
                return type(error), "MatMul" in error.message
    return None


def test_an_op_no_device_can_run_fails_as_legacy_fails():
    before = len(legacy_fallback.kept)
    legacy = _first_error(legacy_api())
    assert _first_error(compat_api()) == legacy == (tf.errors.InvalidArgumentError, True)
    assert "MatMul" in " ".join(legacy_fallback.kept[before:])


def _updates_a_reference_variable(api):
    # TF1's default variables: an assign in the example graph cannot run inside tf.data.
    seen = tf1.Variable(0, use_resource=False, name="seen")
    return [_counted(api, 7), tf1.assign_add(seen, 1) * 10]


def _reads_its_own_iterator(api):
    # A program's own tf.data iterator, read by each example (legacy's enqueue ran it).
    offsets = tf1.data.make_one_shot_iterator(tf.data.Dataset.range(100, 200)).get_next()
    return [_counted(api, 7), offsets]


@pytest.mark.parametrize("example", [_updates_a_reference_variable, _reads_its_own_iterator])
def test_an_example_graph_tf_data_cannot_run_runs_on_legacy_queues(example):
    # Found at build, where legacy runs: never the deferred error of a placeholder, which
    # legacy's runners could not feed either (test_batching.py).
    before = len(legacy_fallback.kept)
    assert_same(lambda api: api.batch(example(api), 3, allow_smaller_final_batch=True))
    assert "batch 'batch'" in " ".join(legacy_fallback.kept[before:])


def test_a_shuffling_batcher_over_a_reference_variable_update_gives_legacy_s_examples():
    def build(api):
        return api.shuffle_batch(
            _updates_a_reference_variable(api), 2, 6, 1, seed=1, allow_smaller_final_batch=True
        )

    assert_same_examples(build)


def test_a_bad_argument_raises_legacy_s_own_error(unservable):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as ours:
            compat_input.shuffle_batch(_example(compat_input), 5, capacity=4, min_after_dequeue=8)
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as theirs:
            tf1.train.shuffle_batch(_example(tf1.train), 5, capacity=4, min_after_dequeue=8)
    assert str(ours.value) == str(theirs.value)
