"""Runs one of tf_slim's own test modules, on legacy queues or on compat_input, as a user's
program runs: TF1 behaviour, then (`compat`) compat_input.install() before tf_slim is
imported. Prints one JSON line: each test's id and outcome.

    python tests/tf_slim_suite.py legacy|compat tf_slim.data.parallel_reader_test

tf_slim 1.1.0 and its tests reach names TensorFlow has since moved, and `nose`; those are
shimmed here, alike for both sides, and nothing else of tf_slim is changed:
`ops.Tensor`, `ops.IndexedSlices`, `control_flow_ops.case` and `.cond`,
`variable_scope.variable`, `nose.tools.nottest`. (Its learning_test makes its data with
`int()` of one-element arrays, an error from NumPy 2.4: requirements.txt pins NumPy 2.3.)
"""

import json
import os
import sys
import types
import unittest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
from tensorflow.python.framework import indexed_slices  # noqa: E402
from tensorflow.python.framework import ops  # noqa: E402
from tensorflow.python.framework import tensor  # noqa: E402
from tensorflow.python.ops import control_flow_case  # noqa: E402
from tensorflow.python.ops import control_flow_ops  # noqa: E402
from tensorflow.python.ops import variable_scope  # noqa: E402


def _shim_moved_names() -> None:
    ops.Tensor = tensor.Tensor
    ops.IndexedSlices = indexed_slices.IndexedSlices
    control_flow_ops.case = control_flow_case.case
    control_flow_ops.cond = tf.compat.v1.cond
    variable_scope.variable = tf.compat.v1.Variable
    nose = types.ModuleType("nose")
    nose.tools = types.ModuleType("nose.tools")

    def nottest(f):
        f.__test__ = False
        return f

    nose.tools.nottest = nottest
    sys.modules.update({"nose": nose, "nose.tools": nose.tools})


def main(side: str, module_name: str) -> None:
    tf.compat.v1.disable_v2_behavior()
    tf.get_logger().setLevel("ERROR")
    _shim_moved_names()
    if side == "compat":
        import compat_input

        compat_input.install()
    module = __import__(module_name, fromlist=["_"])
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    outcomes = {test.id(): "passed" for test in _tests(suite)}  # Run empties the suite.
    result = unittest.TestResult()
    suite.run(result)
    for kind in ("failures", "errors"):
        for test, trace in getattr(result, kind):
            outcomes[test.id()] = trace.strip().splitlines()[-1][:300]
    for test, _ in result.skipped:
        outcomes[test.id()] = "skipped"
    print(json.dumps(outcomes))


def _tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _tests(item)
        else:
            yield item


if __name__ == "__main__":
    main(*sys.argv[1:])
