"""Shared test fixtures: the legacy-vs-compat_input runner and small data-file writers.

`differential(build)` runs one scenario twice, each in a fresh graph and session: once on
TensorFlow's own `tf.compat.v1` queues (the oracle) and once on compat_input, and returns
both `Run`s. `build(api)` makes the graph with `api.batch`, `api.TextLineReader`, ... and
returns what to fetch each step; each run steps until OutOfRangeError or `steps`.
"""

import collections
import dataclasses
import gzip
import math
import os
import sys
import types
from collections.abc import Callable
from typing import Any
from typing import Optional

import numpy as np
import pytest
import tensorflow as tf

import compat_input

tf1 = tf.compat.v1
# The world the suite runs in (conftest.py): "tf1" (TF1 behaviour) or "tf2" (eager off and
# compat_input.install(); the compat side of every differential run goes through
# tf.compat.v1's own names there).
WORLD = os.environ.get("COMPAT_INPUT_WORLD", "tf1")
# For a test whose programs run in processes of their own, in the behaviour each program
# sets itself: the suite's world changes nothing there, so a TF2-behaviour run would only
# repeat the TF1 one (minutes of the suite's time limit).
one_world = pytest.mark.skipif(
    WORLD == "tf2", reason="its programs run in processes of their own, the same in both worlds"
)

# Interned: TensorFlow's API modules cache a `getattr` by the name's string object, and a
# name made by split() kept returning what it found before install() (the tf2 world).
_TRAIN_NAMES = [
    sys.intern(name)
    for name in (
        "batch batch_join maybe_batch maybe_batch_join shuffle_batch shuffle_batch_join "
        "maybe_shuffle_batch maybe_shuffle_batch_join input_producer string_input_producer "
        "range_input_producer slice_input_producer limit_epochs match_filenames_once "
        "start_queue_runners QueueRunner add_queue_runner"
    ).split()
]
_READERS = [
    sys.intern(name)
    for name in "TextLineReader TFRecordReader FixedLengthRecordReader WholeFileReader "
    "IdentityReader".split()
]
# Queues a program builds itself (fed by its own QueueRunner).
_QUEUES = [
    sys.intern(name)
    for name in ("FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue")
]


def legacy_api() -> types.SimpleNamespace:
    api = {name: getattr(tf1.train, name) for name in _TRAIN_NAMES}
    api.update({name: getattr(tf1, name) for name in _READERS + _QUEUES})
    return types.SimpleNamespace(name="legacy", **api)


def compat_api() -> types.SimpleNamespace:
    api = {name: getattr(compat_input, name) for name in _TRAIN_NAMES + _READERS + _QUEUES}
    return types.SimpleNamespace(name="compat", **api)


def plain(value: Any) -> Any:
    """Fetched values as comparable Python data."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    if isinstance(value, tf1.SparseTensorValue):  # A namedtuple: before tuples.
        return ("sparse", plain(value.indices), plain(value.values), plain(value.dense_shape))
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def describe(fetches: Any) -> Any:
    """Structure, dtypes and static shapes of what a build returned."""
    if isinstance(fetches, dict):
        return {k: describe(v) for k, v in sorted(fetches.items())}
    if isinstance(fetches, (list, tuple)):
        return [describe(v) for v in fetches]
    if isinstance(fetches, tf.SparseTensor):
        return ("sparse", fetches.dtype.name)
    return (
        "tensor",
        fetches.dtype.name,
        fetches.shape.as_list() if fetches.shape.rank is not None else None,
    )


@dataclasses.dataclass
class Run:
    values: list  # one entry per successful step
    error: Optional[type]  # the error type that ended the run, None if `steps` ran out
    error_message: str
    structure: Any
    after_end: list  # the error types of two more runs after the end


def run_scenario(
    api: types.SimpleNamespace,
    build: Callable,
    steps: int = 200,
    init_local: bool = True,
    timeout_ms: int = 20000,
    install: bool = False,
    feed: Optional[Callable[[int], dict]] = None,
    config: Optional[tf1.ConfigProto] = None,
) -> Run:
    """Runs `build(api)` in a fresh graph and session until the input ends or `steps`.

    `feed(step)`: the feed_dict of each step's run (tensor names as keys), the runs after
    the end included (their steps go on counting).
    `config`: merged into the session's ConfigProto (a program's own session options).
    `install=True` (compat_input only) runs it with `compat_input.install()` in force, for
    what needs the hooks (errors that name their record); it is undone after.
    """
    if (install or WORLD == "tf2") and api.name == "compat" and not _installed():
        compat_input.install()
        try:
            if WORLD == "tf2":
                # Code converted by tf_upgrade_v2 reaches compat_input through
                # tf.compat.v1's own names, patched by install().
                api = types.SimpleNamespace(**{**vars(legacy_api()), "name": "compat"})
                served = vars(compat_api())
                missed = [n for n, f in vars(api).items() if n != "name" and f is not served[n]]
                assert not missed, f"install() left these on legacy queues: {missed}"
            return run_scenario(api, build, steps, init_local, timeout_ms, feed=feed, config=config)
        finally:
            compat_input.uninstall()
    assert not install or api.name == "compat", "the oracle never runs with compat_input installed"
    if api.name == "legacy":
        assert_pristine()
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(None)
        fetches = build(api)
        structure = describe(fetches)
        init = [tf1.global_variables_initializer(), tf1.tables_initializer()]
        if init_local:
            init.append(tf1.local_variables_initializer())
        session_config = tf1.ConfigProto(operation_timeout_in_ms=timeout_ms)
        if config is not None:
            session_config.MergeFrom(config)
        with tf1.Session(config=session_config) as sess:
            sess.run(init)
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            values, error, message, after = [], None, "", []
            step = 0
            for step in range(steps):
                try:
                    values.append(plain(sess.run(fetches, feed and feed(step))))
                except tf.errors.OpError as e:
                    error, message = type(e), e.message
                    break
            if error is tf.errors.OutOfRangeError:
                for later in range(2):
                    try:
                        sess.run(fetches, feed and feed(step + 1 + later))
                        after.append(None)
                    except tf.errors.OpError as e:
                        after.append(type(e))
            coord.request_stop()
            try:
                coord.join(threads, stop_grace_period_secs=10)
            except tf.errors.OpError:
                pass  # The legacy run re-raises its runner's error here; the test looks at values.
    return Run(values, error, message, structure, after)


def _installed() -> bool:
    from compat_input._src.core import patching

    return bool(patching.active_patches())


def differential(build: Callable, install: bool = False, **kwargs) -> tuple:
    """The scenario on legacy queues (no compat_input patch active), then on compat_input
    (`install=True`: with `compat_input.install()` in force, see run_scenario)."""
    legacy = run_scenario(legacy_api(), build, **kwargs)
    return legacy, run_scenario(compat_api(), build, install=install, **kwargs)


def started(sess, api=None) -> tuple:
    """(coordinator, threads) of the graph's queue runners, started as TF1 programs do
    (with `api`'s start_queue_runners where given: compat_input's without install())."""
    coord = tf1.train.Coordinator()
    start = api.start_queue_runners if api is not None else tf1.train.start_queue_runners
    return coord, start(sess, coord=coord)


def stop(coord, threads) -> None:
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)


def trained_and_saved(api, step, path: str, steps: int = 3) -> str:
    """`step` run `steps` times in a new session of the default graph, its variables
    initialized and its input started with `api`, then a checkpoint of all it saves
    written to `path`: that checkpoint's prefix."""
    saver = tf1.train.Saver()
    with tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())
        coord, threads = started(sess, api)
        for _ in range(steps):
            sess.run(step)
        written = saver.save(sess, path)
        stop(coord, threads)
    return written


def assert_pristine() -> None:
    """The oracle runs on TensorFlow as TensorFlow ships it: nothing of ours is installed."""
    from compat_input._src.core import patching

    assert patching.active_patches() == [], "compat_input is installed during a legacy run"


def assert_same(build: Callable, **kwargs) -> Run:
    """Exact order, same structure and shapes, OutOfRangeError at the same step."""
    legacy, compat = differential(build, **kwargs)
    assert compat.structure == legacy.structure
    assert compat.values == legacy.values
    assert compat.error == legacy.error, (compat.error, compat.error_message)
    assert compat.after_end == legacy.after_end
    return compat


def _rows(component: Any, structure: Any) -> list:
    """One batched component split into its examples (rows)."""
    if isinstance(component, tuple) and component[:1] == ("sparse",):
        _, indices, values, dense_shape = component
        rows: list = [[] for _ in range(dense_shape[0])]
        for index, value in zip(indices, values):
            rows[index[0]].append((tuple(index[1:]), value))
        # A sparse row is its entries; the padded width is the batch's, not the example's.
        return [("sparse", tuple(r)) for r in rows]
    return list(component)


def _components(step: Any, structure: Any) -> list:
    if isinstance(structure, dict):
        return [(step[k], structure[k]) for k in sorted(structure)]
    if isinstance(structure, list):
        return list(zip(step, structure))
    return [(step, structure)]


def examples(run: Run, batched: bool = True) -> list:
    """Every example a run delivered, in order, all components of an example together.

    `batched=False`: each step fetched one example (a dequeue, a producer's element).
    """
    if not batched:
        return [repr(step) for step in run.values]
    out = []
    for step in run.values:
        columns = [_rows(value, s) for value, s in _components(step, run.structure)]
        sizes = {len(c) for c in columns}
        assert len(sizes) == 1, f"components of one batch differ in size: {sizes}"
        out.extend(repr(tuple(row)) for row in zip(*columns))
    return out


def batch_sizes(run: Run) -> list:
    return [len(_rows(*_components(step, run.structure)[0])) for step in run.values]


def assert_same_examples(
    build: Callable,
    epoch_size: Optional[int] = None,
    exact_sizes: bool = True,
    batched: bool = True,
    **kwargs,
) -> tuple:
    """Where legacy shuffles: the same whole examples, the same batches, the same end.

    Examples are compared whole (an image with its label), as multisets over the run and,
    with `epoch_size`, over each epoch of `epoch_size` consecutive examples. Batch sizes
    step by step (full batches, then legacy's partial final one) and the error that ends
    the run, and two runs after it, are compared exactly.
    """
    legacy, compat = differential(build, **kwargs)
    assert compat.structure == legacy.structure
    assert compat.error == legacy.error, (compat.error, compat.error_message)
    assert compat.after_end == legacy.after_end
    if exact_sizes and batched:
        assert batch_sizes(compat) == batch_sizes(legacy)
    got, want = examples(compat, batched), examples(legacy, batched)
    assert len(got) == len(want)
    assert collections.Counter(got) == collections.Counter(want)
    if epoch_size:
        for start in range(0, len(want), epoch_size):
            assert collections.Counter(got[start : start + epoch_size]) == collections.Counter(
                want[start : start + epoch_size]
            ), f"epoch starting at example {start} differs"
    return legacy, compat


def assert_in_one_thread_order(
    build: Callable, threads: int = 2, rtol: float = 0.0, atol: float = 0.0, **kwargs
) -> tuple:
    """compat_input with `threads` threads delivers exactly what legacy's one thread does.

    Legacy with several threads delivered in an order set by thread timing; compat_input
    keeps the order of one thread, which legacy with one thread shows exactly. `build(api,
    threads)` makes the scenario. `rtol`/`atol`: floats computed over a block may differ
    from one example at a time in the last bits, so they are compared that closely, every
    example in its place.
    """
    legacy = run_scenario(legacy_api(), lambda api: build(api, 1), **kwargs)
    compat = run_scenario(compat_api(), lambda api: build(api, threads), **kwargs)
    assert compat.structure == legacy.structure
    assert compat.error == legacy.error, (compat.error, compat.error_message)
    assert compat.after_end == legacy.after_end
    if not rtol and not atol:
        assert compat.values == legacy.values
    else:
        assert len(compat.values) == len(legacy.values)
        for got, want in zip(compat.values, legacy.values):
            got, want = tf.nest.flatten(got), tf.nest.flatten(want)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                if isinstance(w, (bytes, str)):
                    assert g == w
                else:
                    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return legacy, compat


def drain(sess, batch, limit: int = 100) -> list:
    """The batches `batch` gives until OutOfRangeError (at most `limit`), as lists."""
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(batch).tolist())
        except tf.errors.OutOfRangeError:
            break
    return out


def flatten_examples(values: list, component: Optional[int] = None) -> list:
    """All values of component `component` of a run's batches, in order."""
    out = []
    for step in values:
        part = step if component is None else step[component]
        out.extend(part if isinstance(part, list) else [part])
    return out


# -- data files ----------------------------------------------------------------------------


def write(path: str, data: bytes | str) -> str:
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)
    return path


def write_tfrecords(path: str, records: list, compression: Optional[str] = None) -> str:
    options = tf.io.TFRecordOptions(compression_type=compression or "")
    with tf.io.TFRecordWriter(path, options) as writer:
        for record in records:
            writer.write(record)
    return path


def write_gzip(path: str, data: bytes) -> str:
    with gzip.open(path, "wb") as f:
        f.write(data)
    return path


def example(**features) -> bytes:
    def feature(v):
        if isinstance(v, bytes):
            return tf.train.Feature(bytes_list=tf.train.BytesList(value=[v]))
        if isinstance(v, float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=[v]))
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(np.atleast_1d(v))))

    return tf.train.Example(
        features=tf.train.Features(feature={k: feature(v) for k, v in features.items()})
    ).SerializeToString()


def rel(tmp_path, name: str) -> str:
    return os.fspath(tmp_path / name)


def checkpoint_bytes(prefix: str) -> tuple:
    """(the checkpoint's data in bytes, what its non-variant, non-string variables take):
    read from its files and index, whatever wrote it."""
    data = sum(os.path.getsize(f) for f in tf.io.gfile.glob(prefix + ".data-*"))
    reader = tf.train.load_checkpoint(prefix)
    types, shapes = reader.get_variable_to_dtype_map(), reader.get_variable_to_shape_map()
    model = sum(
        math.prod(shapes[k]) * t.size for k, t in types.items() if t not in (tf.variant, tf.string)
    )
    return data, model
