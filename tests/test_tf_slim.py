"""tf_slim's own tests of its queue-based parts pass on compat_input as they do on legacy.

tf_slim reaches the queue API through TensorFlow's own modules (`training.input`,
`queue_runner`, `supervisor`, `io_ops`), which install() serves too. Each module runs in a
fresh process on each side (tests/tf_slim_suite.py), tf_slim imported after install().
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

# Not imported here: tf_slim's `import tensorflow.compat.v1` would load that module anew in
# this process, in place of the `tf.compat.v1` other test modules hold.
if importlib.util.find_spec("tf_slim") is None:
    pytest.skip("tf_slim is not installed", allow_module_level=True)

_HERE = os.path.dirname(os.path.abspath(__file__))
MODULES = [
    "tf_slim.data.parallel_reader_test",
    "tf_slim.data.prefetch_queue_test",
    "tf_slim.data.dataset_data_provider_test",
    "tf_slim.learning_test",
    "tf_slim.evaluation_test",
]


def _outcomes(side: str, module: str) -> dict:
    done = subprocess.run(
        [sys.executable, os.path.join(_HERE, "tf_slim_suite.py"), side, module],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", MODULES)
def test_tf_slims_own_tests_pass_on_compat_input_as_on_legacy(module):
    legacy = _outcomes("legacy", module)
    compat = _outcomes("compat", module)
    passed = sorted(t for t, outcome in legacy.items() if outcome == "passed")
    assert passed, f"no test of {module} passes on legacy: nothing is compared"
    lost = {t: compat.get(t) for t in passed if compat.get(t) != "passed"}
    assert not lost, lost
