"""The public surface: compat_input/__init__.py only re-exports, sorted."""

import ast
import os

import compat_input
from compat_input._src.install import SERVED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_all_is_sorted_and_complete():
    assert compat_input.__all__ == sorted(compat_input.__all__)
    assert all(hasattr(compat_input, name) for name in compat_input.__all__)


def test_init_only_re_exports():
    tree = ast.parse(open(os.path.join(ROOT, "compat_input", "__init__.py")).read())
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Assign"}


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


def test_every_shim_docstring_opens_with_drop_in_replacement():
    shims = [
        n
        for n in compat_input.__all__
        if n in dir(__import__("tensorflow").compat.v1.train) or n.endswith("Reader")
    ]
    for name in shims:
        doc = getattr(compat_input, name).__doc__ or ""
        if getattr(compat_input, name) is getattr(
            __import__("tensorflow").compat.v1.train, name, None
        ):
            continue  # Re-exported TensorFlow classes (QueueRunner, Coordinator, LooperThread).
        assert doc.startswith("Drop-in replacement for `tf.compat.v1."), name
