"""The `compat-input` command: `run SCRIPT [ARGS...]`; `serve` (a tf.data service, see
runtime/data_service.py), `migrate` (tools/migrate.py) and `compare` (compare.py) are its other
subcommands.

`run` executes an unmodified TF1 program on TensorFlow 2: graph mode and v1 behaviour are
switched on, compat_input is installed into `tf.compat.v1`, and `import tensorflow` made by
the program's own code returns `tf.compat.v1` (the TF1 API). Installed libraries import
TensorFlow as usual. argv, `__name__ == "__main__"` and the exit status
are those of `python SCRIPT`.
"""

import argparse
import atexit
import builtins
import gc
import importlib.util
import os
import runpy
import sys
import time


def _library_dirs() -> tuple:
    """Where installed libraries live: the standard library and every site directory."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    dirs = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    dirs += site.getsitepackages() + [site.getusersitepackages()]
    dirs += [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")]
    # compat_input itself, wherever it is installed from (a checkout, in development).
    dirs.append(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return tuple(os.path.realpath(d) + os.sep for d in dirs if d)


def _tf1_import_hook(root: str):
    """`import tensorflow` in the program's own code returns `tf.compat.v1`.

    The program's code is the script, the modules beside it, and every module that no
    installed library holds: TF1 projects keep their library in a sibling package reached
    through PYTHONPATH or a `sys.path.insert` (`tools/train.py` beside `lib/`, a
    package's `train.py` that imports the package by its root). Installed libraries (tf_slim,
    tensorflow_datasets) import TensorFlow as usual, even from a virtual environment kept
    inside the program's directory.
    """
    import tensorflow as tf

    tf1 = tf.compat.v1
    real_import = builtins.__import__
    libraries = _library_dirs()
    root = os.path.realpath(root) + os.sep
    root_in_library = root.startswith(libraries)
    programs: dict = {}

    def is_programs(origin: str) -> bool:
        if origin not in programs:
            path = os.path.realpath(origin)
            programs[origin] = not path.startswith(libraries) or (
                root_in_library and path.startswith(root)
            )
        return programs[origin]

    def hooked(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name == "tensorflow" and globals:
            origin = globals.get("__file__")
            if origin and is_programs(origin):
                return tf1
        return real_import(name, globals, locals, fromlist, level)

    return hooked


# TensorFlow's words when a TF1 name (tf.layers.dense, rnn_cell.LSTMCell) needs Keras 2.
KERAS_3 = "is not available with Keras 3"
_KERAS_2_HINT = (
    "compat-input run: this program uses TF1 layers, which need Keras 2 on TensorFlow 2: "
    "pip install 'compat-input[keras2]' (or the tf_keras matching your TensorFlow) and run "
    "it again with TF_USE_LEGACY_KERAS=1 in the environment."
)


def _report() -> None:
    from compat_input._src.batchers import legacy_fallback
    from compat_input._src.capture import vectorize
    from compat_input._src.runtime import input_waits
    from compat_input._src.runtime import pipeline
    from compat_input._src.runtime import position_costs

    names = pipeline.built_pipelines
    print(
        f"compat-input: served the input with {len(names)} tf.data pipelines"
        + (f" ({', '.join(sorted(set(names)))})" if names else ""),
        file=sys.stderr,
    )
    # How each batcher ran its per-example graph, so that a slow path is never silent.
    for what, how in dict.fromkeys(vectorize.mappings):
        print(f"compat-input: {what} ran {how}", file=sys.stderr)
    # Inputs and the program's own queues that stayed TensorFlow's, and why: never
    # silently slow.
    for line in dict.fromkeys(legacy_fallback.kept):
        print(f"compat-input: left on TensorFlow's queue: {line}", file=sys.stderr)
    # How long the program's runs waited on the input, and whether it was input-bound.
    for line in input_waits.report():
        print(f"compat-input: {line}", file=sys.stderr)
    # What input positions added to checkpoints, where they added much.
    for said in (position_costs.positions_said(), position_costs.left_out_said()):
        if said:
            print(f"compat-input: {said}", file=sys.stderr)


def serve(ns: argparse.Namespace) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from compat_input._src.runtime import data_service

    try:
        address, servers = data_service.serve(
            port=ns.port,
            workers=ns.workers,
            worker_port=ns.worker_port,
            work_dir=ns.work_dir,
            dispatcher=ns.dispatcher,
            host=ns.host,
        )
    except (ValueError, RuntimeError) as error:  # A port in use is a RuntimeError.
        print(f"compat-input serve: {error}", file=sys.stderr)
        return 2
    joined = "joined" if ns.dispatcher else "dispatcher"
    # The address alone on standard output, to copy or parse; the rest on standard error.
    print(address, flush=True)
    print(
        f"compat-input serve: {joined} {address} with {ns.workers} worker(s). Trainers read "
        f"through it with COMPAT_INPUT_SERVICE={address} (or compat-input run --service "
        f"{address}). Ctrl-C stops it.",
        file=sys.stderr,
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    for server in reversed(servers):
        server._stop()  # TensorFlow's servers stop only through this (or at exit).
    return 0


def run(
    script: str,
    args: list,
    legacy: bool = False,
    service: str = None,
    record_batches=None,
    input_waits: bool = True,
) -> int:
    if service is not None:
        from compat_input._src.core.options import service_address

        try:
            os.environ["COMPAT_INPUT_SERVICE"] = service_address(service, "--service")
        except ValueError as error:
            print(f"compat-input run: {error}", file=sys.stderr)
            return 2
    script = os.path.abspath(script)
    if not os.path.isfile(script):
        print(f"compat-input run: no such file: {script}", file=sys.stderr)
        return 2
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    # TF1's tf.layers and RNN cells (and tf.contrib.rnn's) were Keras 2's; TensorFlow 2
    # gives them only with Keras 2 chosen before it is imported. Chosen here wherever
    # tf_keras is installed (`compat-input[keras2]`), unless the environment says otherwise.
    if importlib.util.find_spec("tf_keras") is not None:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    import compat_input

    tf.compat.v1.disable_v2_behavior()
    compat_input.configure(input_waits=input_waits)
    # --legacy too stands in for tf.contrib (its rows alone): both runs reach the same names.
    compat_input.install(record_batches=record_batches, serve=not legacy)
    root = os.path.dirname(script) + os.sep
    builtins.__import__ = _tf1_import_hook(root)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    if not legacy:
        atexit.register(_report)
        from compat_input._src.commands import interrupts

        interrupts.watch()  # Ctrl-C ends a step that waits forever (legacy's did not end).
    # TensorFlow's modules are some 270k objects that live as long as the process, and the
    # collector's full passes, which building a graph sets off, scanned them all: 0.12 s
    # each, in a CIFAR-10 trainer's build. Frozen out of its scans before the program runs
    # (as servers freeze before they fork), in both modes; the program's own objects are
    # collected as before.
    gc.freeze()
    try:
        runpy.run_path(script, run_name="__main__")
    except AttributeError as e:
        if KERAS_3 in str(e):  # Said last, after the traceback.
            atexit.register(print, _KERAS_2_HINT, file=sys.stderr)
        raise
    except SystemExit as e:
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="compat-input", description="Run and migrate TF1 queue-input programs on tf.data."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="run an unmodified TF1 program on TensorFlow 2")
    run_parser.add_argument(
        "--legacy",
        action="store_true",
        help="run on TensorFlow's own tf.compat.v1 queues instead, to compare",
    )
    run_parser.add_argument(
        "--service",
        metavar="ADDRESS",
        help="read batchers' examples through this tf.data service (compat-input serve)",
    )
    run_parser.add_argument(
        "--record-batches",
        metavar="PATH",
        help="write a fingerprint of each input batch the program reads to PATH (compare)",
    )
    run_parser.add_argument(
        "--no-input-waits",
        action="store_true",
        help="no run times its reads' waits on the input (sampled runs do, at no cost measured; "
        "the report at exit then gives no waits)",
    )
    run_parser.add_argument("script")
    run_parser.add_argument("args", nargs=argparse.REMAINDER)
    serve_parser = sub.add_parser(
        "serve", help="run a tf.data service (dispatcher and workers) for shared inputs"
    )
    serve_parser.add_argument("--port", type=int, default=5050, help="dispatcher port (0: any)")
    serve_parser.add_argument("--workers", type=int, default=2, help="workers to start here")
    serve_parser.add_argument(
        "--worker-port", type=int, default=0, help="first worker port (0: any free port)"
    )
    serve_parser.add_argument(
        "--work-dir", help="dispatcher journal: a restarted dispatcher resumes its jobs"
    )
    serve_parser.add_argument(
        "--dispatcher",
        metavar="ADDRESS",
        help="start workers only, for the dispatcher at ADDRESS (another machine's serve)",
    )
    serve_parser.add_argument(
        "--host", default="localhost", help="this machine's name as other machines reach it"
    )
    sub.add_parser("migrate", help="rewrite TF1 programs onto compat_input (migrate --help)")
    sub.add_parser("compare", help="run a program two ways and compare its output (CI)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["migrate"]:
        from compat_input_tools import migrate

        return migrate.main(argv[1:])
    if argv[:1] == ["compare"]:
        from compat_input._src.commands import compare

        return compare.compare(argv[1:])
    ns = parser.parse_args(argv)
    if ns.command == "run":
        return run(
            ns.script,
            ns.args,
            legacy=ns.legacy,
            service=ns.service,
            record_batches=ns.record_batches,
            input_waits=not ns.no_input_waits,
        )
    if ns.command == "serve":
        return serve(ns)
    return 2


if __name__ == "__main__":
    sys.exit(main())
