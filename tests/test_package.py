"""The public surface (re-exports, sorted), the install boundary, and the house rules."""

import ast
import os
import re
import subprocess
import sys

import pytest

import compat_input
from compat_input._src.commands import contrib
from compat_input._src.commands.served_names import SERVED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_all_is_sorted_and_complete():
    assert compat_input.__all__ == sorted(compat_input.__all__)
    assert all(hasattr(compat_input, name) for name in compat_input.__all__)


def test_init_only_re_exports():
    # A table of names and the modules defining them, imported on first use (PEP 562).
    tree = ast.parse(open(os.path.join(ROOT, "compat_input", "__init__.py")).read())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "Import", "Assign", "FunctionDef"}
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert functions <= {"__getattr__", "__dir__"}


def test_every_public_name_is_what_its_module_defines():
    from compat_input._src.batchers import batching
    from compat_input._src.inputs import readers

    assert compat_input.batch is batching.batch
    assert compat_input.TextLineReader is readers.TextLineReader
    assert set(__import__("compat_input").__dir__()) >= set(compat_input.__all__)
    try:
        compat_input.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


@pytest.mark.parametrize(
    "args",
    ["--help", "run --help", "serve --help", "migrate --help", "compare --help", "run", "bogus"],
)
def test_the_command_answers_help_and_argument_errors_without_tensorflow(args):
    # `compat-input --help` once took 2.1 s, TensorFlow's start-up lines printed first.
    code = (
        "import sys\n"
        "from compat_input._src.commands import cli\n"
        "try:\n"
        f"    cli.main({args.split()!r})\n"
        "except SystemExit as e:\n"
        "    code = e.code\n"
        "print('tensorflow' in sys.modules, code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    loaded, code = done.stdout.splitlines()[-1].split()
    assert loaded == "False", done.stderr[-2000:]
    assert code == ("0" if "--help" in args else "2")


# The legacy queue input functions: batchers and producers among the names we serve.
_LEGACY_INPUT = {
    name
    for namespace, names in SERVED
    if namespace == "train"
    for name in names
    if "batch" in name or name.endswith("_producer")
}


def test_runtime_never_calls_the_legacy_queue_input_functions():
    for root, _, names in os.walk(os.path.join(ROOT, "compat_input")):
        for name in (n for n in names if n.endswith(".py")):
            tree = ast.parse(open(os.path.join(root, name)).read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and node.attr in _LEGACY_INPUT:
                    assert not ast.unparse(node.value).endswith("train"), (name, ast.unparse(node))
                if isinstance(node, ast.ImportFrom):
                    module = node.module or ""
                    imported = {a.name for a in node.names}
                    assert "training.input" not in module, name
                    assert not (module.endswith("python.training") and "input" in imported), name


def test_only_the_named_fallback_looks_up_tensorflow_s_input_functions():
    holders = []
    for root, _, names in os.walk(os.path.join(ROOT, "compat_input")):
        for name in (n for n in names if n.endswith(".py")):
            if 'legacy_module("training.input")' in open(os.path.join(root, name)).read():
                holders.append(name)
    assert holders == ["legacy_fallback.py"]


_TF_SLIM_REACHES = """
import ast, importlib, os, tf_slim
root = os.path.dirname(tf_slim.__file__)
def reached():
    out = set()
    for folder, _, names in os.walk(root):
        for name in (n for n in names if n.endswith(".py")):
            tree = ast.parse(open(os.path.join(folder, name)).read())
            aliases = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "tensorflow.python."):
                    for a in node.names:
                        try:
                            aliases[a.asname or a.name] = importlib.import_module(
                                f"{node.module}.{a.name}")
                        except ImportError:
                            pass
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id in aliases):
                    out.add((aliases[node.value.id].__name__, node.attr))
    return out
def missing():
    # tensorflow.python.layers' names come from Keras 2 (tf_keras), not from TensorFlow.
    return sorted(
        (m, a) for m, a in reached()
        if not m.startswith("tensorflow.python.layers") and not hasattr(importlib.import_module(m), a))
before = missing()
assert before, "TensorFlow has all of them again: MOVED is no longer needed"
compat_input.install()
assert missing() == [], missing()
from tensorflow.python.ops import control_flow_ops, control_flow_case
assert control_flow_ops.case is control_flow_case.case
compat_input.uninstall()
assert missing() == before
print(len(before))
"""


def test_install_gives_back_every_moved_internal_tf_slim_reaches_and_uninstall_takes_it():
    pytest.importorskip("tf_slim")
    out = _python("import compat_input\n" + _TF_SLIM_REACHES)
    assert int(out) >= 10


def test_every_shim_docstring_opens_with_drop_in_replacement():
    shims = [
        n
        for n in compat_input.__all__
        if n in dir(__import__("tensorflow").compat.v1.train)
        or n.endswith("Reader")
        or n in dir(__import__("tensorflow").compat.v1.queue)
    ]
    for name in shims:
        doc = getattr(compat_input, name).__doc__ or ""
        if getattr(compat_input, name) is getattr(
            __import__("tensorflow").compat.v1.train, name, None
        ):
            continue  # Re-exported TensorFlow classes (QueueRunner, Coordinator, LooperThread).
        assert doc.startswith("Drop-in replacement for `tf.compat.v1."), name
    for name in contrib.CONTRIB_TRAINING:
        doc = getattr(compat_input, name).__doc__
        assert doc.startswith(f"Drop-in replacement for `tf.contrib.training.{name}`"), name


# -- the install boundary -----------------------------------------------------------------

_TENSORFLOW_STATE = """
import logging, tensorflow as tf
from tensorflow.python.client import session as s
from tensorflow.python.framework import ops
from tensorflow.python.ops.parallel_for import pfor
from tensorflow.python.training import saver
def state():
    logger = tf.get_logger()
    return (
        dict(vars(s.BaseSession)), dict(vars(s.Session)), dict(vars(saver.Saver)),
        repr(ops._proto_function_registry._registry),
        dict(pfor._pfor_converter_registry), logger.level, list(logger.filters),
        {name: getattr(tf.compat.v1.train, name) for name in dir(tf.compat.v1.train)},
        {name: getattr(tf.compat.v1, name) for name in ("TextLineReader", "TFRecordReader")},
        served_anywhere(),
    )
import sys
def served_anywhere():
    # Every attribute of every TensorFlow module that holds a served object, by where.
    from compat_input._src.commands.served_names import SERVED
    served = {}
    for path, names in SERVED:
        module = tf.compat.v1
        for part in filter(None, path.split(".")):
            module = getattr(module, part)
        served.update({id(getattr(module, name)): name for name in names})
    found = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("tensorflow") and module is not None:
            for name, value in list(getattr(module, "__dict__", {}).items()):
                if id(value) in served:
                    found[f"{module_name}.{name}"] = value
    return found
"""


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _TENSORFLOW_STATE + code],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_importing_and_using_compat_input_changes_nothing_in_tensorflow(tmp_path):
    # A fresh process: the test process has imported compat_input long ago.
    out = _python(
        "before = state()\n"
        "import compat_input\n"
        "tf.compat.v1.disable_eager_execution()\n"
        "assert state() == before, 'import'\n"
        "with tf.Graph().as_default():\n"
        "    x = compat_input.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()\n"
        "    line = tf.strings.as_string(x)\n"
        "    b = compat_input.batch([tf.strings.to_number(line), x], 4, num_threads=2)\n"
        "    with tf.compat.v1.Session() as sess:\n"
        "        sess.run(tf.compat.v1.local_variables_initializer())\n"
        "        compat_input.start_queue_runners(sess)\n"
        "        sess.run(b)\n"
        "assert state() == before, 'use'\n"
        "print('unchanged')\n"
    )
    assert out.strip() == "unchanged"


def test_install_and_uninstall_round_trip_every_patch_exactly():
    out = _python(
        "import compat_input\n"
        "from compat_input._src.commands import install\n"
        "from compat_input._src.core import patching\n"
        "before = state()\n"
        "compat_input.install(); compat_input.install()\n"
        "after = state()\n"
        "assert after != before\n"
        "assert s.BaseSession.run is not before[0]['run']\n"
        "assert tf.compat.v1.train.batch is compat_input.batch\n"
        "assert len(patching.active_patches()) == len([p for p in install.PATCHES if p.option in (None, 'contrib', 'moved_internals', 'tf1_gaps')])\n"
        # Every module that held one of TensorFlow's served objects holds ours now, the
        # modules libraries import the queue API from (tf_slim) included.
        "left = [where for where, v in before[-1].items() if v is not compat_input.QueueRunner\n"
        "        and vars(sys.modules[where.rsplit('.', 1)[0]])[where.rsplit('.', 1)[1]] is v]\n"
        "assert not left, sorted(left)\n"
        "from tensorflow.python.training import input as tf_input, queue_runner, supervisor\n"
        "from tensorflow.python.ops import io_ops\n"
        "assert tf_input.shuffle_batch is compat_input.shuffle_batch\n"
        "assert queue_runner.start_queue_runners is compat_input.start_queue_runners\n"
        "assert supervisor.Supervisor is compat_input.Supervisor\n"
        "assert io_ops.TFRecordReader is compat_input.TFRecordReader\n"
        "compat_input.uninstall()\n"
        "assert state() == before\n"
        "assert tf_input.shuffle_batch is not compat_input.shuffle_batch\n"
        "assert patching.active_patches() == []\n"
        "print(len(install.PATCHES))\n"
    )
    assert int(out) >= 3


def test_installed_sessions_leave_out_the_tfg_round_trip_in_tf1_behaviour_only():
    # Grappler's TFG pass converts the graph and its function library to MLIR and back at
    # each new set of fetches, which changes no value with v1 control flow: 8 of a new set's
    # 15 ms on the youtube-8m-shaped trainer's graph (session_options.py).
    out = _python(
        "import compat_input\n"
        "tf.compat.v1.disable_v2_behavior()\n"
        "def tfg_off(sess):\n"
        "    return bool(sess._config and sess._config.graph_options.rewrite_options.disable_tfg_optimizer)\n"
        "mine = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=3)\n"
        "with tf.Graph().as_default():\n"
        "    assert not tfg_off(tf.compat.v1.Session(config=mine)), 'before install'\n"
        "    compat_input.install()\n"
        "    for config in (mine, None):\n"
        "        with tf.compat.v1.Session(config=config) as sess:\n"
        "            assert tfg_off(sess), config\n"
        "            assert sess.run(tf.constant(2.0) * 3.0) == 6.0\n"
        "    assert tf.compat.v1.Session(config=mine)._config.inter_op_parallelism_threads == 3\n"
        "    assert not mine.graph_options.rewrite_options.disable_tfg_optimizer, 'the program\\'s own'\n"
        "    tf.compat.v1.enable_control_flow_v2()\n"
        "    assert not tfg_off(tf.compat.v1.Session(config=mine)), 'functional conds'\n"
        "    tf.compat.v1.disable_control_flow_v2()\n"
        "    compat_input.uninstall()\n"
        "    assert not tfg_off(tf.compat.v1.Session()), 'after uninstall'\n"
        "print('ok')\n"
    )
    assert out.strip() == "ok"


def test_every_patch_is_a_row_of_the_one_table():
    """No module assigns attributes of TensorFlow's objects: install.py's table has every
    replacement, which core/patching.py applies with setattr."""
    for root, _, names in os.walk(os.path.join(ROOT, "compat_input")):
        for name in (n for n in names if n.endswith(".py") and n != "install.py"):
            tree = ast.parse(open(os.path.join(root, name)).read())
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in targets:
                    if isinstance(target, ast.Attribute):
                        owner = ast.unparse(target.value)
                        assert not owner.startswith(("tf", "session_lib", "saver_lib")), (
                            name,
                            ast.unparse(target),
                        )
                    if isinstance(target, ast.Subscript):
                        # block_converters.py's `registry[...]` is pfor's, changed under a lock
                        # while our graph converts and put back at once (tf_internals.py).
                        owner = ast.unparse(target.value)
                        assert not owner.startswith(("tf", "pfor", "_pfor", "ops", "_ops")), (
                            name,
                            ast.unparse(target),
                        )


def test_only_tf_internals_imports_private_tensorflow_modules():
    for root, _, names in os.walk(os.path.join(ROOT, "compat_input")):
        for name in (n for n in names if n.endswith(".py") and n != "tf_internals.py"):
            source = open(os.path.join(root, name)).read()
            assert "tensorflow.python" not in source, name


# -- the layers of compat_input/_src ---------------------------------------------------------

SRC = os.path.join(ROOT, "compat_input", "_src")
# Each subpackage and the ones below it that it may import (its __init__.py says the same).
# `compat_input` itself (the public names) sits above every layer.
LAYERS = {
    "core": set(),
    "runtime": {"core"},
    "bad_records": {"core", "runtime"},
    "capture": {"core", "runtime", "bad_records"},
    "inputs": {"core", "runtime", "bad_records"},
    "batchers": {"core", "runtime", "bad_records", "capture"},
    "commands": {"core", "runtime", "bad_records", "capture", "inputs", "batchers", "compat_input"},
}


def _modules() -> dict:
    """`layer.module` -> path, for every module of compat_input/_src."""
    found = {}
    for layer in sorted(os.listdir(SRC)):
        folder = os.path.join(SRC, layer)
        if os.path.isdir(folder) and layer != "__pycache__":
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py") and name != "__init__.py":
                    found[f"{layer}.{name[:-3]}"] = os.path.join(folder, name)
    return found


def _imports(path: str) -> set:
    """`layer.module` (or `compat_input`) of what a module imports, at the top or inside
    functions."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            names = [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["compat_input", "_src"] and len(parts) >= 4:
                found.add(f"{parts[2]}.{parts[3]}")
            elif parts[0] == "compat_input" and parts[1:2] != ["_src"]:
                found.add("compat_input")
            elif parts[:2] == ["compat_input", "_src"]:
                found.add(".".join(parts[2:]) or "_src")  # A layer itself: never allowed.
    return found


def test_src_holds_only_the_layers():
    entries = {n for n in os.listdir(SRC) if n not in ("__init__.py", "__pycache__")}
    assert entries == set(LAYERS)


def test_imports_only_go_down_the_layers():
    for module, path in _modules().items():
        layer = module.split(".")[0]
        for imported in _imports(path):
            target = imported.split(".")[0]
            assert target == layer or target in LAYERS[layer], f"{module} imports {imported}"


def test_each_layer_says_what_it_models_and_may_import():
    for layer, allowed in LAYERS.items():
        doc = ast.get_docstring(ast.parse(open(os.path.join(SRC, layer, "__init__.py")).read()))
        assert doc and len(doc.split()) > 30, layer
        said = doc.split("Imports ")[-1]
        if "every layer below" in said:
            assert allowed >= set(LAYERS) - {layer}, layer
        else:
            assert {n for n in LAYERS if n in re.findall(r"\w+", said)} == allowed, layer


def test_modules_import_each_other_without_a_cycle():
    modules = _modules()
    graph = {m: _imports(path) & set(modules) for m, path in modules.items()}
    visiting, done = set(), set()

    def visit(module, path):
        assert module not in visiting, " -> ".join(path + [module])
        if module in done:
            return
        visiting.add(module)
        for other in graph[module]:
            visit(other, path + [module])
        visiting.discard(module)
        done.add(module)

    for module in graph:
        visit(module, [])


def test_no_module_is_much_over_400_lines():
    sizes = {m: len(open(path).readlines()) for m, path in _modules().items()}
    assert {m: size for m, size in sizes.items() if size > 410} == {}


def test_no_module_only_forwards():
    """Every module defines something of its own: a function, a class or a table."""
    for module, path in _modules().items():
        body = ast.parse(open(path).read()).body
        own = [
            node
            for node in body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))
            or (
                isinstance(node, (ast.Assign, ast.AnnAssign))
                and not isinstance(node.value, (ast.Name, ast.Attribute))
            )
        ]
        assert own, module


def test_the_public_names_are_pinned():
    """The public API does not change by accident: adding or removing a name is a decision."""
    assert compat_input.__all__ == [
        "CaptureError",
        "CompatInputError",
        "Coordinator",
        "FIFOQueue",
        "FixedLengthRecordReader",
        "Held",
        "IdentityReader",
        "InputQueue",
        "LooperThread",
        "NextQueuedSequenceBatch",
        "PaddingFIFOQueue",
        "PriorityQueue",
        "QueueRunner",
        "RandomShuffleQueue",
        "ReaderBase",
        "Saver",
        "Supervisor",
        "TFRecordReader",
        "TextLineReader",
        "WholeFileReader",
        "add_queue_runner",
        "as_dataset",
        "batch",
        "batch_join",
        "batch_sequences_with_states",
        "bucket",
        "bucket_by_sequence_length",
        "configure",
        "first_skipped_record",
        "from_dataset",
        "hold",
        "input_producer",
        "install",
        "installed",
        "iterate",
        "limit_epochs",
        "match_filenames_once",
        "maybe_batch",
        "maybe_batch_join",
        "maybe_shuffle_batch",
        "maybe_shuffle_batch_join",
        "range_input_producer",
        "rejection_sample",
        "reset",
        "shuffle_batch",
        "shuffle_batch_join",
        "skipped_files",
        "skipped_records",
        "slice_input_producer",
        "start_pipelines",
        "start_queue_runners",
        "stratified_sample",
        "string_input_producer",
        "uninstall",
    ]
    from compat_input import testing

    assert testing.__all__ == ["InputRun", "run_input", "examples", "assert_same_input"]
