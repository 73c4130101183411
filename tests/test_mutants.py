"""The oracle catches planted bugs: each mutant of tests/mutants.py turns the suite red.

Each mutant runs the differential tests in a subprocess of its own (stopping at the first
failure), killed on any outcome; a mutant whose run passes is a kind of bug the oracle
cannot see.
"""

import os
import subprocess
import sys

import mutants
import pytest

HERE = os.path.dirname(__file__)
# The differential tests of batching, producers, readers and vectorized graphs.
SUITE = ["test_batching.py", "test_producers.py", "test_readers.py", "test_vectorize.py"]


@pytest.mark.parametrize("name", sorted(mutants.MUTANTS))
def test_a_planted_bug_turns_the_differential_suite_red(name):
    env = dict(os.environ, COMPAT_INPUT_MUTANT=name, TF_CPP_MIN_LOG_LEVEL="2")
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:xdist", "-p", "no:randomly"]
    # subprocess.run kills the child if the timeout passes, and waits for it on any outcome.
    result = subprocess.run(
        command + [os.path.join(HERE, f) for f in SUITE],
        env=env,
        cwd=os.path.dirname(HERE),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout[-3000:] + result.stderr[-2000:]
    # 1: tests failed. Not 0 (the bug went unseen), not 2-5 (the run itself broke).
    assert result.returncode == 1, output
    assert "AssertionError" in output or "assert" in output, output
