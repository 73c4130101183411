"""The codemod engine: one TF1 source file in, the compat_input version out.

Four passes, each a small, separately testable step:
0. `_ContribToHomes` (libcst), on the original: tf.contrib names with a home move there
   (tf_slim, tf.compat.v1.nn.rnn_cell, a function written into the file), before the
   upgrader can swap them for stand-ins that compute other values; then `exact.KeepExact`
   keeps on tf.compat.v1 the TF1 names whose TensorFlow 2 successor is another function
   (`tf.image.resize_images`), and `imports.ImportsOnV1` moves `from tensorflow import
   flags` and its kind to the tf.compat.v1 homes; line numbers stay.
1. TensorFlow's own upgrader (upgrader.py, `tensorflow.tools.compatibility`) upgrades the
   TF1 API as `tf_upgrade_v2` would; it runs once, on the original text, so what it cannot
   convert is reported with the original line numbers. Where its parser cannot read a file
   Python reads, fallback.py keeps every TF1 name on tf.compat.v1 instead.
2. `_ServeFromCompatInput` (libcst): queue-input names (tables in rules.py) become
   `compat_input.<name>`, whatever the spelling, the upgrader's `tf.compat.v1` ones
   included; `from tensorflow.train import batch` becomes `from compat_input import batch`;
   `import compat_input` is scheduled once.
3. `_GraphMode` (libcst): a program that uses graph-mode APIs gets
   `tf.compat.v1.disable_v2_behavior()` after its imports, once.
What cannot be converted safely is reported by `findings.Flags` (rules.FLAGS), never
rewritten; the upgrader's own messages by upgrader.py.
The code is parsed, never executed.
"""

import dataclasses
import inspect

import libcst as cst
from libcst import codemod
from libcst.codemod.visitors import AddImportsVisitor
from libcst.codemod.visitors import RemoveImportsVisitor
from libcst.metadata import QualifiedNameProvider

from compat_input._src.commands import contrib_helpers

from . import exact
from . import fallback
from . import findings
from . import imports
from . import resolve
from . import rules
from . import tfdata
from . import upgrader


def _compat(name: str) -> cst.Attribute:
    return cst.Attribute(value=cst.Name("compat_input"), attr=cst.Name(name))


class _ContribToHomes(cst.CSTTransformer):
    """Pass 0: tf.contrib names with a home are rewritten there, each on its own line.

    Packages to import (`packages`) and functions to write into the file (`helpers`) are
    collected, for the later passes: adding them here would move the lines the
    upgrader's messages name.
    """

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self):
        super().__init__()
        self.packages: set = set()
        self.modules: set = set()  # `from parent import module`, for rules.FROM_MODULES
        self.helpers: dict = {}

    def _names(self, node) -> set:
        names = findings.imported_names(self.get_metadata(QualifiedNameProvider, node, set()))
        return rules.with_tf1_spellings(names)

    def leave_Attribute(self, original_node, updated_node):
        for name in self._names(original_node):
            root = (
                findings.tensorflow_root(self, original_node) if name in rules.EXPRESSIONS else None
            )
            if root is not None:
                # tf.contrib.tfprof.model_analyzer.FLOAT_OPS_OPTIONS -> a builder's call.
                return cst.parse_expression(f"{root.value}.{rules.EXPRESSIONS[name]}")
            if name in rules.FROM_MODULES:
                # tf.contrib.lookup.index_table_from_tensor -> lookup_ops.<the same>.
                module, attribute = rules.FROM_MODULES[name]
                self.modules.add(module)
                return findings.dotted(cst.Name(module.rpartition(".")[2]), attribute)
            if name in contrib_helpers.HELPERS:
                helper = contrib_helpers.HELPERS[name]
                for needed in (helper, *contrib_helpers.CALLS.get(helper, ())):
                    self.helpers[needed.__name__] = needed
                return cst.Name(helper.__name__)
            moved = rules.moved(name)
            if moved:
                # tf.contrib.slim.prefetch_queue -> tf_slim.prefetch_queue, `import tf_slim`.
                package, _, rest = moved.partition(".")
                self.packages.add(package)
                return findings.dotted(cst.Name(package), rest) if rest else cst.Name(package)
        return updated_node

    def leave_Call(self, original_node, updated_node):
        rewrite = next(
            (
                rules.CALL_REWRITES[n]
                for n in self._names(original_node.func)
                if n in rules.CALL_REWRITES
            ),
            None,
        )
        root = findings.tensorflow_root(self, original_node.func)
        if rewrite is None or root is None:
            return updated_node
        path, parameters, renamed = rewrite
        args = []
        for index, arg in enumerate(updated_node.args):
            if arg.star:
                return updated_node  # *args: which parameter is which is not known here.
            keyword = arg.keyword.value if arg.keyword else None
            if keyword is None and index > 0:
                keyword = parameters[index]
            if keyword is not None and keyword != parameters[0]:
                arg = arg.with_changes(
                    keyword=cst.Name(renamed.get(keyword, keyword)),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""),
                        whitespace_after=cst.SimpleWhitespace(""),
                    ),
                )
            args.append(arg)
        return updated_node.with_changes(func=findings.dotted(root, path), args=args)


def _after_imports(body) -> int:
    """The index after a module's last top-level import statement (0 if it has none)."""
    position = 0
    for index, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
        ):
            position = index + 1
    return position


def _with_helpers(tree: cst.Module, helpers: dict) -> cst.Module:
    """`tree` with each helper's source after its imports (and the graph-mode switch)."""
    if not helpers:
        return tree
    body = list(tree.body)
    position = _after_imports(body)
    switch = cst.helpers.get_full_name_for_node
    while position < len(body) and isinstance(body[position], cst.SimpleStatementLine):
        small = body[position].body[0]
        called = (
            small.value.func
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
            else None
        )
        if called is None or not (switch(called) or "").endswith(_DISABLE_CALLS):
            break
        position += 1
    sources = [cst.parse_statement(inspect.getsource(helper)) for helper in helpers.values()]
    return tree.with_changes(body=body[:position] + sources + body[position:])


class _ServeFromCompatInput(codemod.VisitorBasedCodemodCommand):
    """Pass 2: the queue-input names, in every spelling, become compat_input's."""

    DESCRIPTION = "Serve tf.train queue-input names from compat_input."
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    # With --to-tfdata: the runners stay TensorFlow's, which start the pipelines left on
    # compat_input as well (its runner is in QUEUE_RUNNERS), so a program whose input all
    # became tf.data imports nothing of compat_input.
    keep_runners = False

    def leave_Attribute(self, original_node, updated_node):
        names = findings.imported_names(
            self.get_metadata(QualifiedNameProvider, original_node, set())
        )
        renamed = rules.with_tf1_spellings(names) & rules.ABSL_RENAMES.keys()
        if renamed:
            # flags.FlagsError -> flags.Error: absl's name for the same base class.
            return updated_node.with_changes(attr=cst.Name(rules.ABSL_RENAMES[renamed.pop()]))
        for name in names:
            if self.keep_runners and rules.RENAMES.get(name) in rules.KEPT_WITH_TFDATA:
                root = findings.tensorflow_root(self, original_node)
                if root is not None:
                    return findings.dotted(root, f"compat.v1.train.{rules.RENAMES[name]}")
            if name in rules.RENAMES:
                AddImportsVisitor.add_needed_import(self.context, "compat_input")
                return _compat(rules.RENAMES[name])
            path = rules.keep_v1(name)
            root = findings.tensorflow_root(self, original_node) if path else None
            if root is None and path and rules.contrib_module(name.rpartition(".")[0]):
                # `rnn.LSTMCell` of `from tensorflow.contrib import rnn`: the import goes.
                AddImportsVisitor.add_needed_import(self.context, "tensorflow")
                root = cst.Name("tensorflow")
            if root is not None:
                # tf.summary.scalar -> tf.compat.v1.summary.scalar, same alias.
                return findings.dotted(root, path)
        return updated_node

    def leave_ImportFrom(self, original_node, updated_node):
        # tf.contrib's moved modules and TF1's other import forms were rewritten by pass 0
        # (imports.ImportsOnV1): what is left to do here is compat_input's names.
        served, kept = [], []
        for alias, full in resolve.from_import_names(original_node):
            if rules.contrib_module(full):
                # Its uses moved to their homes (pass 0): the import goes with the last.
                module, _, name = full.rpartition(".")
                asname = alias.asname.name.value if alias.asname else None
                RemoveImportsVisitor.remove_unused_import(self.context, module, name, asname)
            (served if full in rules.RENAMES else kept).append((alias, full))
        if not served:
            return updated_node
        for alias, full in served:
            asname = alias.asname.name.value if alias.asname else None
            AddImportsVisitor.add_needed_import(
                self.context, "compat_input", rules.RENAMES[full], asname
            )
        if not kept:
            return cst.RemoveFromParent()
        return updated_node.with_changes(names=_last_without_comma([a for a, _ in kept]))


def _last_without_comma(aliases: list) -> list:
    return aliases[:-1] + [aliases[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


# Prefixes of dotted names (each seen with a trailing dot) that need graph mode.
_GRAPH_MODE_USES = (
    "compat_input.",
    "compat.v1.Session.",
    "compat.v1.InteractiveSession.",
    "compat.v1.placeholder.",
)
# The same, where the module imports TensorFlow (a parameter named `tf` is not it).
_GRAPH_MODE_TF_USES = (
    "compat.v1.train.Supervisor.",
    "compat.v1.train.MonitoredTrainingSession.",
    # What --to-tfdata writes.
    "compat.v1.data.make_one_shot_iterator.",
    # A program that reads its graph back (tfprof's analysis) builds one: eager, it is empty.
    "compat.v1.get_default_graph.",
)
_DISABLE_CALLS = ("disable_eager_execution", "disable_v2_behavior")


class _DottedNames(cst.CSTVisitor):
    """The dotted names a module uses (`tf.compat.v1.Session`), and those it calls."""

    def __init__(self):
        super().__init__()
        self.used: set = set()
        self.called: set = set()

    def visit_Attribute(self, node) -> None:
        name = cst.helpers.get_full_name_for_node(node)
        if name:
            self.used.add(name + ".")

    def visit_Call(self, node) -> None:
        name = cst.helpers.get_full_name_for_node(node.func)
        if name:
            self.called.add(name)


class _GraphMode(codemod.Codemod):
    """Pass 3: programs that need graph mode switch it on, once, after their imports."""

    DESCRIPTION = "Switch on TF1 graph behaviour where a program needs it."

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        # Read from the syntax, not the text: a comment or a string naming
        # disable_eager_execution switches nothing off.
        names = _DottedNames()
        tree.visit(names)
        uses = _GRAPH_MODE_USES + (_GRAPH_MODE_TF_USES if _imports_tensorflow(tree) else ())
        if not any(use in name for name in names.used for use in uses):
            return tree
        if any(name.rpartition(".")[2] in _DISABLE_CALLS for name in names.called):
            return tree
        alias, last_import = None, _after_imports(tree.body) - 1
        for statement in tree.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for name in small.names:
                        full = cst.helpers.get_full_name_for_node(name.name)
                        if full in ("tensorflow", "tensorflow.compat.v1") and alias is None:
                            local = name.asname.name.value if name.asname else full
                            alias = local if full == "tensorflow" else f"{local}.__v1__"
        body = list(tree.body)
        if alias is None:
            alias = "tensorflow"
            body.insert(last_import + 1, cst.parse_statement("import tensorflow\n"))
            last_import += 1
        # disable_v2_behavior, not only disable_eager_execution: tf_upgrade_v2 turns
        # tf.Variable into TF2's, whose initialization differs (see migration_guide.md).
        call = (
            alias.replace(".__v1__", ".disable_v2_behavior()")
            if alias.endswith(".__v1__")
            else f"{alias}.compat.v1.disable_v2_behavior()"
        )
        statement = cst.parse_statement(call + "\n")
        body.insert(last_import + 1, statement)
        return tree.with_changes(body=body)


def _imports_tensorflow(module: cst.Module) -> bool:
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                names = [cst.helpers.get_full_name_for_node(a.name) for a in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None:
                names = [cst.helpers.get_full_name_for_node(small.module)]
            else:
                continue
            if any(n == "tensorflow" or n.startswith("tensorflow.") for n in names):
                return True
    return False


@dataclasses.dataclass
class Outcome:
    code: str
    findings: list
    # Lines where a call was upgraded to a TensorFlow 2 function proven exact (exact.PROVEN):
    # where migrate --verify looks when the migrated program differs.
    proven_lines: list = dataclasses.field(default_factory=list)


def migrate_source(
    code: str, filename: str = "<string>", to_tfdata=False, keep_lines=frozenset()
) -> Outcome:
    """The migrated text of one file, and what needs a person. Raises ParserSyntaxError.

    With `to_tfdata`, the input pipelines tfdata.py recognizes become plain tf.data first;
    a `tfdata.Project` there also converts reads in the reader classes of other modules.
    On `keep_lines` (of `code`), every name whose TensorFlow 2 successor is another
    function keeps its tf.compat.v1 spelling, even where a test proved the call exact.
    """
    module = cst.parse_module(code)
    wrapper = cst.MetadataWrapper(module)
    flags = findings.Flags()
    wrapper.visit(flags)
    module = module.visit(imports.ImportsOnV1())
    homes = _ContribToHomes()
    wrapper = cst.MetadataWrapper(module)
    module = wrapper.visit(homes)
    keep = exact.KeepExact(keep_lines)
    module = cst.MetadataWrapper(module).visit(keep)
    flags.findings.extend(findings.Finding(line, column, flag) for line, column, flag in keep.notes)
    converted = []
    if to_tfdata:
        project = to_tfdata if isinstance(to_tfdata, tfdata.Project) else None
        module, converted = tfdata.convert(module, project)
        # A hand-built queue that became tf.data gets no note on hand-built queues (CI001).
        gone = {n for c in converted for n in range(c.line, c.last + 1)}
        flags.findings = [
            f for f in flags.findings if not (f.flag.code == "CI001" and f.line in gone)
        ]
        flags.findings.extend(findings.Finding(c.line, 1, c.flag) for c in converted)
    if _imports_tensorflow(module):
        # TensorFlow's upgrader next, on the original lines: its complaints then carry the
        # original line numbers, and its tf.compat.v1 spellings are rows of our table.
        try:
            upgraded, upgrader_findings = upgrader.upgrade(module.code, filename)
            module = cst.parse_module(upgraded)
        except upgrader.Unreadable as error:
            # Migrated all the same, every TF1 name kept on tf.compat.v1 (fallback.py).
            module = fallback.keep_on_v1(module)
            flag = dataclasses.replace(
                fallback.UNREADABLE, message=fallback.UNREADABLE.message.format(reason=error)
            )
            upgrader_findings = [findings.Finding(1, 1, flag)]
    else:
        # tf_upgrade_v2 renames any `tf.` it sees; a module without TensorFlow is not ours.
        upgrader_findings = []
    context = codemod.CodemodContext(filename=filename)
    for package in sorted(homes.packages):
        AddImportsVisitor.add_needed_import(context, package)
    for imported in sorted(homes.modules):
        AddImportsVisitor.add_needed_import(context, *imported.rsplit(".", 1))
    serving = _ServeFromCompatInput(context)
    serving.keep_runners = bool(to_tfdata)
    served = serving.transform_module(module)
    ours = {f.line for f in flags.findings}
    found = flags.findings + [f for f in upgrader_findings if f.line not in ours]
    final = _GraphMode(codemod.CodemodContext(filename=filename)).transform_module(served)
    # Never trust "converted": each TensorFlow name of the result must exist.
    origin = resolve.line_origins(code, final.code)
    for line, column, flag in resolve.unresolved(final):
        line = origin(line)
        if line not in ours:  # A table row said it already, with its own fix.
            found.append(findings.Finding(line, column, flag))
    # Last: the functions written in are whole blocks of lines the original never had.
    final = _with_helpers(final, homes.helpers)
    found = sorted(found, key=lambda f: (f.line, f.column))
    return Outcome(final.code, found, sorted(keep.proven_lines))
