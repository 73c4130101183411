"""Runs one of tf_slim's own test modules, on legacy queues or on compat_input, as a user's
program runs: TF1 behaviour, then (`compat`) compat_input.install() before tf_slim is
imported. Prints one JSON line: each test's id and outcome.

    python tests/tf_slim_suite.py legacy|compat tf_slim.data.parallel_reader_test

tf_slim is run as published: the TensorFlow internals it reaches that TensorFlow 2.16 moved
(`control_flow_ops.case`, `ops.Tensor`, ...) are given back by compat_input.install() on
both sides (`serve=False` on legacy queues, as `compat-input run --legacy` does), and its
tests' `nose` is pynose (requirements.txt). (Its learning_test makes its data with
`int()` of one-element arrays, an error from NumPy 2.4: requirements.txt pins NumPy 2.3.)
"""

import json
import os
import sys
import unittest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402


def main(side: str, module_name: str) -> None:
    tf.compat.v1.disable_v2_behavior()
    tf.get_logger().setLevel("ERROR")
    import compat_input

    compat_input.install(serve=side == "compat")
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
