"""The static check after rewriting: every TensorFlow name the migrated file uses must
exist in the installed TensorFlow.

TensorFlow's upgrader reports some names as converted that TensorFlow 2 no longer has
(`tf.compat.v1.layers.dense` fails under Keras 3; `tf.contrib` is gone), and says nothing
of others. Each dotted name the migrated code takes from TensorFlow, as an attribute path
or an import, is looked up on the installed package, attribute by attribute, without
running the program. A name that does not resolve is an error finding with TensorFlow's
own reason, so that "nothing needs a person" is only said of code whose names exist.
"""

import difflib
import functools
import importlib
import sys
import types

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider
from libcst.metadata import QualifiedNameSource

from compat_input._src.commands.cli import KERAS_3

from . import rules

# Modules whose TF1 names TensorFlow 2 serves only with Keras 2 (tf_keras).
_KERAS_2_MODULES = ("tensorflow.compat.v1.layers.", "tensorflow.compat.v1.nn.rnn_cell.")


def _flag(name: str, reason: str) -> rules.Flag:
    dotted = name.replace("tensorflow.", "tf.", 1)
    if KERAS_3 in reason or name.startswith(_KERAS_2_MODULES):
        return rules.Flag(
            "CI007",
            "error",
            f"{dotted} needs Keras 2 on this TensorFlow ({reason}): pip install "
            "'compat-input[keras2]' and run with TF_USE_LEGACY_KERAS=1, or rewrite it with "
            "Keras 3 layers",
            "names-tensorflow-2-lacks",
        )
    return rules.Flag(
        "CI008",
        "error",
        f"{dotted} does not exist in the installed TensorFlow ({reason}): port it by hand",
        "names-tensorflow-2-lacks",
    )


def missing(name: str):
    """Why the dotted `tensorflow...` name does not resolve, or None where it does."""
    return _find(name)[1]


def lookup(name: str):
    """The object the dotted `name` resolves to, or None."""
    return _find(name)[0]


@functools.cache
def _find(name: str) -> tuple:
    """`(object, None)` for a dotted name that resolves, `(None, reason)` otherwise."""
    parts = name.split(".")
    try:
        found = importlib.import_module(parts[0])
    except ImportError as error:
        return None, str(error)
    for index, part in enumerate(parts[1:], 1):
        if not isinstance(found, (types.ModuleType, type)):
            # An instance's attributes (`flags.FLAGS.steps`, defined when the program
            # runs) cannot be known, or asked for, without running the program.
            return found, None
        try:
            found = getattr(found, part)
        except AttributeError as error:
            reason = str(error).splitlines()[0] or f"no attribute {part!r}"
            # A submodule not imported yet is still a name the program can import, but
            # only inside a real package: importing `tensorflow.compat.v1.layers` would
            # put new module objects at `tensorflow.compat` in this process.
            if sys.modules.get(".".join(parts[:index])) is not found:
                return None, reason
            try:
                found = importlib.import_module(".".join(parts[: index + 1]))
            except ImportError:
                return None, reason
        except Exception as error:  # noqa: BLE001 - a lazy loader may fail any way.
            return None, f"{type(error).__name__}: {error}".splitlines()[0]
    return found, None


class _Names(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self):
        super().__init__()
        self.findings: list = []

    def _check(self, node, name: str) -> bool:
        if not (name == "tensorflow" or name.startswith("tensorflow.")):
            return False
        if name == "tensorflow.contrib" or name.startswith("tensorflow.contrib."):
            # A use is reported on the original by rules.FLAGS, with its own advice; an
            # import is left only where a use of it is.
            return True
        reason = missing(name)
        if reason is not None:
            position = self.get_metadata(PositionProvider, node).start
            self.findings.append((position.line, position.column + 1, _flag(name, reason)))
        return True

    def visit_Attribute(self, node) -> bool:
        inner = node.value
        while isinstance(inner, cst.Attribute):
            inner = inner.value
        if not isinstance(inner, cst.Name):
            # `tf.get_variable_scope().reuse_variables`: an attribute of a call's result,
            # which libcst names as if of the function. The call's own name is checked.
            return True
        names = self.get_metadata(QualifiedNameProvider, node, set())
        imported = [q.name for q in names if q.source == QualifiedNameSource.IMPORT]
        # The whole dotted name only; its prefixes resolve if it does.
        return not any(self._check(node, name) for name in imported[:1])

    def visit_ImportFrom(self, node) -> bool:
        for alias, name in from_import_names(node):
            self._check(alias, name)
        return False

    def visit_Import(self, node) -> bool:
        for alias in node.names:
            self._check(alias, cst.helpers.get_full_name_for_node(alias.name))
        return False


def from_import_names(node: cst.ImportFrom) -> list:
    """`(alias, qualified name)` of each name a `from X import a, b` takes; none for a
    relative or star import."""
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return []
    module = cst.helpers.get_full_name_for_node(node.module)
    return [(a, f"{module}.{cst.helpers.get_full_name_for_node(a.name)}") for a in node.names]


def unresolved(module: cst.Module) -> list:
    """`(line, column, Flag)` for each TensorFlow name `module` uses that does not exist."""
    names = _Names()
    cst.MetadataWrapper(module).visit(names)
    return names.findings


def line_origins(original: str, migrated: str):
    """A function from a line of `migrated` to the line of `original` it came from
    (1-based); the two texts are compared once."""
    matcher = difflib.SequenceMatcher(
        None, original.splitlines(), migrated.splitlines(), autojunk=False
    )
    opcodes = matcher.get_opcodes()

    def origin(line: int) -> int:
        for tag, i1, i2, j1, j2 in opcodes:
            if j1 < line <= j2:
                if tag == "equal":
                    return i1 + (line - j1)
                if tag == "replace":
                    # Lines the migration adds or drops (imports, the graph-mode switch)
                    # sit at the top of a changed block: count from its end.
                    return min(max(i2 - (j2 - line), i1 + 1), max(i2, i1 + 1))
                return max(i1, 1)  # An inserted line: the original line before it.
        return line

    return origin
