"""What the codemod reports for a person: findings, and the visitor that finds the
patterns of rules.FLAGS (and the fed batch sizes and read queue sizes) in a TF1 file;
and how every pass reads the names a node was imported as. Nothing here rewrites code."""

import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider
from libcst.metadata import QualifiedNameSource

from compat_input._src.commands import contrib_helpers

from . import resolve
from . import rules


@dataclasses.dataclass
class Finding:
    line: int
    column: int
    flag: rules.Flag

    def render(self, path: str) -> str:
        return f"{path}:{self.line}:{self.column}: {self.flag.render()}"


def dotted(root: cst.BaseExpression, path: str) -> cst.BaseExpression:
    """The attribute path `root.<path>`, as the node a pass writes in a name's place."""
    for part in path.split("."):
        root = cst.Attribute(value=root, attr=cst.Name(part))
    return root


def imported_names(node_metadata) -> set:
    return {q.name for q in node_metadata if q.source == QualifiedNameSource.IMPORT}


def root(command, node) -> tuple:
    """The expression `node`'s dotted path starts from, and what it was imported as."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node, imported_names(command.get_metadata(QualifiedNameProvider, node, set()))


def tensorflow_root(command, node):
    """The name `node`'s dotted path starts from, where it is TensorFlow's alias, or None."""
    start, rooted = root(command, node)
    return start if isinstance(start, cst.Name) and rooted == {"tensorflow"} else None


def _argument(call: cst.Call, keywords: tuple, position: int):
    """The argument of `call` given by one of `keywords`, else its `position`-th positional
    one (before any `*args`), or None."""
    arg = next((a for a in call.args if a.keyword and a.keyword.value in keywords), None)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if arg is None and len(positional) > position:
        arg = positional[position]
    return arg


class Flags(cst.CSTVisitor):
    """Finds the patterns of rules.FLAGS and the batch-size / queue-size patterns."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self):
        super().__init__()
        self.findings: list = []
        self._placeholders: set = set()
        self._producers: set = set()
        self._rewritten_calls: set = set()

    def _report(self, node, flag) -> None:
        position = self.get_metadata(PositionProvider, node).start
        self.findings.append(Finding(position.line, position.column + 1, flag))

    def _names(self, node) -> set:
        return imported_names(self.get_metadata(QualifiedNameProvider, node, set()))

    def _flag_for(self, names: set):
        names = rules.with_tf1_spellings(names)
        if names & rules.SERVED_CONTRIB:
            return None  # Rewritten to compat_input.
        for name in sorted(names):
            if name in rules.FLAGS:
                return rules.FLAGS[name]
            for prefix, flag in rules.FLAGS.items():
                if prefix.endswith(".") and (name.startswith(prefix) or name == prefix[:-1]):
                    return flag
        return None

    def visit_Attribute(self, node) -> bool:
        names = rules.with_tf1_spellings(self._names(node))
        if any(rules.moved(name) for name in names):
            self._report_moved(node)
            return False  # Rewritten by pass 0 to its package.
        helped = sorted(names & contrib_helpers.HELPERS.keys())
        if helped:
            self._report_once(node, rules.HELPER_NOTES[helped[0]])
            return False  # Pass 0 writes the function into the file.
        if names & rules.FROM_MODULES.keys():
            return False  # Pass 0 takes it from TensorFlow's module of the same code.
        if id(node) in self._rewritten_calls:
            return False  # Pass 0 rewrites the call (rules.CALL_REWRITES).
        if any(rules.keep_v1(name) for name in names):
            return False  # Rewritten by pass 2, prefixes included.
        if names & rules.SERVED_CONTRIB:
            return False  # Rewritten to compat_input (`tf.contrib.training` is no finding).
        flag = self._flag_for(names)
        if flag is not None:
            self._report(node, flag)
            return False  # One finding per dotted name, not one per prefix.
        return True

    def _report_moved(self, node) -> None:
        self._report_once(node, rules.MOVED_NOTE)

    def _report_once(self, node, flag) -> None:
        if not any(f.flag is flag for f in self.findings):  # Once a file.
            self._report(node, flag)

    def visit_ImportFrom(self, node) -> bool:
        # `from tensorflow.contrib import slim`: the imported name, as an attribute would be.
        for alias, name in resolve.from_import_names(node):
            if rules.moved(name):
                self._report_moved(alias)
                continue
            if rules.contrib_module(name):
                # `from tensorflow import contrib`, `from tensorflow.contrib import layers`:
                # each use is reported, or moved by pass 0 (and the import, then unused,
                # removed by pass 2).
                continue
            flag = self._flag_for({name})
            if flag is not None:
                self._report(alias, flag)
        return False

    def visit_Assign(self, node) -> None:
        if not isinstance(node.value, cst.Call) or len(node.targets) != 1:
            return
        target = node.targets[0].target
        if not isinstance(target, cst.Name):
            return
        called = self._names(node.value.func)
        if any(n.endswith(".placeholder") for n in called):
            self._placeholders.add(target.value)
        if any(rules.RENAMES.get(n) in rules.PRODUCERS for n in called):
            self._producers.add(target.value)

    def visit_Call(self, node) -> None:
        func = node.func
        called = rules.with_tf1_spellings(self._names(func))
        if called & rules.CALL_REWRITES.keys() and not any(a.star for a in node.args):
            self._rewritten_calls.add(id(func))
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "size"
            and isinstance(func.value, cst.Name)
            and func.value.value in self._producers
        ):
            self._report(node, rules.QUEUE_SIZE)
        self._check_flag_default(node, called)
        served = {rules.RENAMES.get(n) for n in self._names(func)} & rules.BATCHERS
        if not served:
            return
        arg = _argument(node, ("batch_size",), rules.BATCH_SIZE_POSITION[served.pop()])
        if arg is None:
            return
        value = arg.value
        fed = isinstance(value, cst.Name) and value.value in self._placeholders
        direct = isinstance(value, cst.Call) and any(
            n.endswith(".placeholder") for n in self._names(value.func)
        )
        if fed or direct:
            self._report(arg, rules.PLACEHOLDER_BATCH_SIZE)

    def _check_flag_default(self, node, called: set) -> None:
        """A TensorFlow flag defined with a literal default absl refuses (rules.FLAG_DEFAULT)."""
        kind = next(
            (
                n.rpartition(".")[2]
                for n in called
                if n.startswith("tensorflow.") and n.rpartition(".")[0].endswith("flags")
            ),
            None,
        )
        refused = rules.REFUSED_DEFAULTS.get(kind)
        if refused is None:
            return
        arg = _argument(node, ("default", "default_value"), 1)
        value = arg.value if arg is not None else None
        if isinstance(value, cst.UnaryOperation):
            value = value.expression  # -1.0
        if value is not None and type(value).__name__ in refused:
            self._report(arg, rules.FLAG_DEFAULT)
