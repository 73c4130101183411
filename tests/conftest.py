import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

# The first `import tensorflow.compat.v1` (tf_slim's, a test's) loads that module again
# and puts the new object at tf.compat.v1: done here, before any test file keeps
# `tf.compat.v1` as `tf1`, every file holds the one module install() patches.
import tensorflow.compat.v1  # noqa: E402,F401

# Which world the suite runs in (make test runs both):
# - "tf1" (default): TF1 behaviour, where users are: `compat-input run` and the code
#   `compat-input migrate` writes call disable_v2_behavior() (V1 TensorShape, reference
#   variables, v1 control flow).
# - "tf2": a TF2 program with eager execution off and compat_input.install(), as code
#   converted by tf_upgrade_v2 runs; differential tests reach compat_input through
#   tf.compat.v1's own names there (helpers.compat_api).
WORLD = os.environ.get("COMPAT_INPUT_WORLD", "tf1")
if WORLD == "tf1":
    tf.compat.v1.disable_v2_behavior()
elif WORLD == "tf2":
    tf.compat.v1.disable_eager_execution()
else:
    raise ValueError(f"COMPAT_INPUT_WORLD={WORLD!r}: use 'tf1' or 'tf2'")
tf.get_logger().setLevel("ERROR")


@pytest.fixture
def skip_bad_records():
    """Pipelines built in the test use bad_records="skip"; the default comes back after."""
    import compat_input

    compat_input.configure(bad_records="skip")
    yield
    compat_input.configure(bad_records="raise")


@pytest.fixture(autouse=True)
def _nothing_installed_between_tests():
    """A test that installs compat_input and fails midway must not leave it installed for
    the next test's legacy run."""
    yield
    import compat_input

    compat_input.uninstall()


_BATCHERS = tuple(
    f"{kind} '"
    for kind in (
        "batch",
        "maybe_batch",
        "batch_join",
        "maybe_batch_join",
        "shuffle_batch",
        "maybe_shuffle_batch",
        "shuffle_batch_join",
        "maybe_shuffle_batch_join",
    )
)


@pytest.fixture(autouse=True)
def _every_servable_batcher_is_served(request):
    """No silent fallback: a batcher the suite builds runs on TensorFlow's queues only in a
    test marked `falls_back` (tests/test_legacy_fallback.py)."""
    from compat_input._src.batchers import legacy_fallback

    before = len(legacy_fallback.kept)
    yield
    if request.node.get_closest_marker("falls_back") is None:
        kept = [line for line in legacy_fallback.kept[before:] if line.startswith(_BATCHERS)]
        assert not kept, f"served on TensorFlow's queues: {kept}"


@pytest.fixture
def training():
    """`tf.contrib.training` as a TF1 program reaches it once compat_input is installed."""
    import compat_input

    compat_input.install()
    try:
        yield tf.compat.v1.contrib.training
    finally:
        compat_input.uninstall()


@pytest.fixture
def installed():
    """compat_input.install() for the test (errors that name their record need it)."""
    import compat_input

    compat_input.install()
    yield
    compat_input.uninstall()


def pytest_configure(config):
    """`COMPAT_INPUT_MUTANT=<name>`: plant one deliberate bug (tests/mutants.py)."""
    config.addinivalue_line(
        "markers", "falls_back: the test builds batchers that run on TensorFlow's queues"
    )
    name = os.environ.get("COMPAT_INPUT_MUTANT")
    if name:
        import mutants

        mutants.plant(name)
