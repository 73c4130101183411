"""Inputs on the tf.data service: `compat-input serve`, shared inputs split between trainer
processes exactly once, private inputs whole for each trainer, what cannot run on a worker,
rewinding, and a worker killed mid-epoch. Oracle: the same trainer on legacy queues in
one process (`tests/programs/shared_trainer.py`)."""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import pytest
import tensorflow as tf

import compat_input
from compat_input._src.runtime import data_service
from helpers import compat_api
from helpers import legacy_api
from helpers import plain
from helpers import run_scenario

tf1 = tf.compat.v1

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_TRAINER = os.path.join(_ROOT, "tests", "programs", "shared_trainer.py")
_ENV = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2")


def _serve(*args) -> tuple:
    """`compat-input serve ARGS` in a subprocess; returns it and the address it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "compat_input._src.commands.cli", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_ENV,
    )
    line = process.stdout.readline()
    # The address alone, to copy or parse (a comma stuck to it once left trainers waiting).
    assert re.fullmatch(r"grpc://localhost:[0-9]+\n", line), line
    return process, line.strip()


@pytest.fixture(scope="module")
def service():
    process, address = _serve("--port", "0", "--workers", "2")
    yield address
    process.kill()
    process.wait()


@pytest.fixture
def configured():
    """Restores the process-wide service option after the test."""
    yield compat_input.configure
    compat_input.configure(service="")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("shared")
    paths = []
    for i in range(6):
        path = root / f"part{i}.csv"
        path.write_text("".join(f"{i * 1000 + j},{j % 7}\n" for j in range(150)))
        paths.append(str(path))
    return paths


def _trainer(api: str, files: list, *flags, service=None, **popen) -> subprocess.Popen:
    env = dict(_ENV, COMPAT_INPUT_SERVICE=service or "")
    return subprocess.Popen(
        [sys.executable, _TRAINER, api, *files, *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def _result(process: subprocess.Popen, timeout: float = 180) -> dict:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    result = json.loads(out.strip().splitlines()[-1])
    result["examples"] = collections.Counter(map(tuple, result["examples"]))
    return result


def test_two_trainers_split_a_shared_input_exactly_once(service, files):
    legacy = _result(_trainer("legacy", files, "--shared", "--epochs", "2"))
    trainers = [
        _trainer("compat", files, "--shared", "--epochs", "2", service=service) for _ in range(2)
    ]
    first, second = (_result(t) for t in trainers)
    assert first["served"] and second["served"] and not legacy["served"]
    # Every example of both epochs once between the two: none lost, none read twice.
    assert first["examples"] + second["examples"] == legacy["examples"]
    assert sum(legacy["examples"].values()) == 2 * 6 * 150


def test_private_inputs_are_made_on_the_workers_and_read_whole_by_each_trainer(service, files):
    legacy = _result(_trainer("legacy", files))
    trainers = [_trainer("compat", files, service=service) for _ in range(2)]
    for result in (_result(t) for t in trainers):
        assert result["served"]
        assert result["examples"] == legacy["examples"]


def _py_func_input(api, shared: bool):
    queue = api.string_input_producer(
        [b"a", b"b", b"c"], num_epochs=1, shuffle=False, shared_name="names" if shared else None
    )
    name = queue.dequeue()
    upper = tf1.py_func(lambda s: s.upper(), [name], tf.string, name="shout")
    upper.set_shape([])
    return api.batch([name, upper], 2, allow_smaller_final_batch=True)


def test_a_shared_input_that_needs_this_process_fails_at_build_naming_the_op(configured):
    configured(service="grpc://localhost:1")  # Never reached: the check comes first.
    with tf.Graph().as_default():
        with pytest.raises(data_service.NotRemotable) as raised:
            _py_func_input(compat_api(), shared=True)
    message = str(raised.value)
    assert "shout (PyFunc)" in message and "'names'" in message and "drop shared_name" in message


def test_a_variable_of_the_session_in_a_shared_input_is_named(configured):
    configured(service="grpc://localhost:1")
    with tf.Graph().as_default():
        scale = tf1.Variable(3, name="scale")
        value = compat_input.range_input_producer(5, shuffle=False, shared_name="r").dequeue()
        with pytest.raises(data_service.NotRemotable, match=r"scale \((VariableV2|VarHandleOp)\)"):
            compat_input.batch([value * scale.read_value()], 2)


def test_a_private_input_that_needs_this_process_stays_local_and_reads_as_legacy(
    configured, caplog
):
    configured(service="grpc://localhost:1")  # Nothing listens: a local input never asks.
    legacy = run_scenario(legacy_api(), lambda api: _py_func_input(api, shared=False))
    compat = run_scenario(compat_api(), lambda api: _py_func_input(api, shared=False))
    assert compat.values == legacy.values and len(legacy.values) == 2
    assert compat.error is legacy.error is tf.errors.OutOfRangeError
    assert "stays in this process" in caplog.text and "shout (PyFunc)" in caplog.text


def test_a_shared_job_cannot_be_rewound_and_a_private_one_can(service, configured):
    configured(service=service)
    with tf.Graph().as_default():
        shared = compat_input.batch(
            [compat_input.range_input_producer(20, 1, False, shared_name="rewind").dequeue()], 5
        )
        private = compat_input.batch([compat_input.range_input_producer(20, 1, False).dequeue()], 5)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            with pytest.raises(ValueError, match="shared with other trainers.*'rewind'"):
                compat_input.reset(sess, shared)
            passes = [
                sorted(v for batch in compat_input.iterate(sess, private) for v in plain(batch))
                for _ in range(2)
            ]
    assert passes == [list(range(20))] * 2


def test_a_worker_killed_mid_epoch_loses_at_most_its_share_once_restarted(tmp_path, files):
    """The service's own guarantee under worker failure is at most once: a restarted worker
    (same address) lets the job end; the killed worker's unfinished split is lost."""
    dispatcher, address = _serve("--port", "0", "--workers", "0")
    port = 47000 + os.getpid() % 1000
    workers = [_serve("--dispatcher", address, "--worker-port", str(port), "--workers", "1")[0]]
    workers.append(_serve("--dispatcher", address, "--workers", "1")[0])
    try:
        legacy = _result(_trainer("legacy", files, "--epochs", "4"))
        started = tmp_path / "started"
        # Restarted within the bound (20 s), the job goes on (the watch does not fail it).
        flags = ("--epochs", "4", "--delay", "0.05", "--started", str(started))
        flags += ("--service-timeout", "20")
        trainer = _trainer("compat", files, *flags, service=address)
        while not started.exists():
            assert trainer.poll() is None, trainer.stderr.read()[-2000:]
            time.sleep(0.1)
        workers[0].kill()
        workers[0].wait()
        time.sleep(2)
        workers.append(
            _serve("--dispatcher", address, "--worker-port", str(port), "--workers", "1")[0]
        )
        result = _result(trainer, timeout=240)
    finally:
        for process in (*workers, dispatcher):
            process.kill()
    assert result["served"]
    # Nothing read twice, nothing that legacy would not read; some read after the kill.
    assert result["examples"] - legacy["examples"] == collections.Counter()
    assert sum(result["examples"].values()) > 100


def test_serve_refuses_to_join_a_dispatcher_with_no_workers():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compat_input._src.commands.cli",
            "serve",
            "--dispatcher",
            "x:1",
            "--workers",
            "0",
        ],
        capture_output=True,
        text=True,
        env=_ENV,
        timeout=120,
    )
    assert done.returncode == 2 and "workers must be at least 1, got 0" in done.stderr


@pytest.mark.parametrize(
    "address", ["grpc://localhost:5050,", "localhost", "grpc://localhost:0", "http//x:1", " "]
)
def test_configure_rejects_what_cannot_be_a_dispatchers_address(address):
    with pytest.raises(ValueError, match=re.escape(repr(address)) + ".*grpc://host:port"):
        compat_input.configure(service=address)


def test_configure_takes_host_and_port_and_gives_the_grpc_address():
    try:
        assert compat_input.configure(service="localhost:5050").service == "grpc://localhost:5050"
        assert compat_input.configure(service="grpc://10.0.0.2:7").service == "grpc://10.0.0.2:7"
    finally:
        compat_input.configure(service="")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_no_dispatcher_at_the_address_fails_the_build_within_seconds_naming_it(monkeypatch):
    # Legacy analogue: a shared queue on a parameter server that is not there hung its
    # trainers. Here nothing listens at the port: the batcher's build fails, naming it.
    from compat_input._src.runtime import data_service

    monkeypatch.setattr(data_service, "DISPATCHER_WAIT_SECONDS", 1.0)
    address = f"grpc://localhost:{_free_port()}"
    compat_input.configure(service=address)
    try:
        with tf.Graph().as_default():
            x = compat_input.range_input_producer(10, shared_name="job").dequeue()
            start = time.monotonic()
            with pytest.raises(ConnectionError, match=re.escape(address) + ".*compat-input serve"):
                compat_input.batch([x], 2)
            assert time.monotonic() - start < 10
    finally:
        compat_input.configure(service="")


def test_a_malformed_service_in_the_environment_is_named(monkeypatch):
    from compat_input._src.core.options import options

    monkeypatch.setattr(options, "service", None)  # Unset: the environment decides.
    monkeypatch.setenv("COMPAT_INPUT_SERVICE", "localhost:5050,")
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(10).dequeue()
        with pytest.raises(ValueError, match="COMPAT_INPUT_SERVICE.*'localhost:5050,'"):
            compat_input.batch([x], 2)


def _kill_the_only_worker(files, *flags, wait_for_started=True):
    """A trainer (service timeout 5 s) on a dispatcher with one worker, killed once the
    trainer read its first batch and never restarted: the trainer's outcome and how long
    it ran after the kill."""
    dispatcher, address = _serve("--port", "0", "--workers", "0")
    worker = _serve("--dispatcher", address, "--workers", "1")[0]
    try:
        with tempfile.TemporaryDirectory() as scratch:
            started = os.path.join(scratch, "started")
            flags = (*flags, "--started", started, "--service-timeout", "5")
            trainer = _trainer("compat", files, *flags, service=address)
            while not os.path.exists(started):
                assert trainer.poll() is None, trainer.stderr.read()[-2000:]
                time.sleep(0.1)
            worker.kill()
            worker.wait()
            killed = time.monotonic()
            out, err = trainer.communicate(timeout=120)
            return trainer.returncode, err, time.monotonic() - killed, address
    finally:
        for process in (worker, dispatcher):
            process.kill()
            process.wait()


def _names_the_job_the_address_and_the_fix(err: str, address: str) -> None:
    assert "UnavailableError" in err, err[-3000:]
    message = err[err.index("compat_input: input 'shuffle_batch' (job 'train_files')") :]
    assert f"tf.data service at {address}, which has had no live worker for 5 s" in message
    assert f"compat-input serve --dispatcher {address} --workers N" in message
    assert "configure(service_timeout=SECONDS)" in message


def test_the_only_worker_killed_mid_epoch_fails_the_read_within_the_bound(files):
    # Before: the trainer waited forever (still waiting after 150 s).
    code, err, after, address = _kill_the_only_worker(
        files, "--shared", "--epochs", "30", "--delay", "0.1"
    )
    assert code != 0
    _names_the_job_the_address_and_the_fix(err, address)
    # 5 s bound, 3 s before a silent process counts as gone, the polls, and the batches
    # the trainer had already taken in (0.1 s each).
    assert after < 45, after


def test_the_only_worker_killed_after_its_last_block_never_leaves_the_trainer_waiting(files):
    # 900 lines travel in four blocks of 256, all taken in before the kill. The end of the
    # job is the worker's to tell: if the trainer had it before the kill, it ends as
    # legacy does; if not, it waited forever before, and now fails within the bound.
    code, err, after, address = _kill_the_only_worker(files, "--shared", "--delay", "0.05")
    assert after < 45, after
    if code != 0:
        _names_the_job_the_address_and_the_fix(err, address)


@pytest.mark.parametrize("timeout", [0, -1, "60", True])
def test_configure_rejects_a_service_timeout_that_is_not_a_positive_number(timeout, configured):
    with pytest.raises((TypeError, ValueError), match="service_timeout"):
        compat_input.configure(service_timeout=timeout)
