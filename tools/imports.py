"""Pass 0c: the import forms of TF1 programs, onto the homes TensorFlow 2 keeps.

`from tensorflow import flags` (`logging`, `gfile`, `app`, `train`, ...) binds a name the
upgrader never looks at again: its uses are `flags.DEFINE_string`, not `tf.flags...`, so
they keep TensorFlow 1's paths, which TensorFlow 2 lacks. `from tensorflow.python.platform
import gfile` reaches a private module. Each such import is rewritten, on its own line, to
the `tf.compat.v1` home of the same name: in TF1 behaviour (which the codemod switches
on) that *is* what the original imported, so every use of the bound name keeps its values,
and the later passes read the uses under their `tensorflow.compat.v1` spelling, which the
tables hold (`train.batch` is then compat_input's). `keras` and `estimator` stay as the
upgrader leaves them. A tf.contrib module that became a package of its own (rules.moved)
is imported from there.
"""

import functools

import libcst as cst

from . import resolve
from . import rules

# Private modules that programs import, and their public homes: the same functions (the
# test suite checks each name the home exports is the private module's own object).
PRIVATE_HOMES = {
    "tensorflow.python.platform.flags": "tensorflow.compat.v1.flags",
    "tensorflow.python.platform.gfile": "tensorflow.compat.v1.gfile",
    "tensorflow.python.platform.tf_logging": "tensorflow.compat.v1.logging",
    "tensorflow.python.platform.app": "tensorflow.compat.v1.app",
    "tensorflow.python.platform.resource_loader": "tensorflow.compat.v1.resource_loader",
}
# Names under `tensorflow` that stay as written: TensorFlow 2's own (the upgrader keeps
# them), the compat modules themselves, and tf.contrib (pass 0 moves its names).
_AS_WRITTEN = ("compat", "contrib", "keras", "estimator", "python", "tools", "core", "lite")


@functools.cache
def home(full: str):
    """The dotted name a TF1 program's import of `full` should take instead, or None
    where `full` is right as it is."""
    moved = rules.moved(full)
    if moved:
        # `import tensorflow.contrib.slim as slim` -> `import tf_slim as slim`, here
        # before the upgrader, which would otherwise read `slim.l2_regularizer` as
        # tf.contrib's and swap in a Keras stand-in that computes other values.
        return moved
    for private, public in PRIVATE_HOMES.items():
        if full == private or full.startswith(private + "."):
            return public + full[len(private) :]
    parts = full.split(".")
    if len(parts) < 2 or parts[1] in _AS_WRITTEN:
        return None
    v1 = v1_twin(full)
    if v1 is None:
        return None
    shallow = "tensorflow.compat.v1." + parts[-1]
    if len(parts) > 2 and resolve.missing(shallow) is None and _same(v1, shallow):
        # `from tensorflow.app import flags` -> `from tensorflow.compat.v1 import flags`:
        # importing the module path tensorflow.compat.v1.app loads that package afresh,
        # without the `flags` that tf.compat.v1 sets on it.
        return shallow
    return v1


def v1_twin(full: str):
    """`tensorflow.compat.v1.<path>` for `full`, `tensorflow.<path>`, where TF1 had that
    name and TensorFlow 2 lacks it or holds another object under it; else None."""
    if not full.startswith("tensorflow."):
        return None
    v1 = "tensorflow.compat.v1." + full.removeprefix("tensorflow.")
    if resolve.missing(v1) is not None:
        return None  # TF1 had no such name either: the names check reports it.
    if resolve.missing(full) is None and _same(full, v1):
        return None  # TensorFlow 2 serves the same object under this name.
    return v1


def _same(a: str, b: str) -> bool:
    return resolve.lookup(a) is resolve.lookup(b)


def _as(alias: cst.ImportAlias, name: str):
    """The `as` clause that keeps the name `alias` bound where `name` is imported."""
    bound = alias.asname.name.value if alias.asname else alias.name.value
    return None if bound == name else cst.AsName(name=cst.Name(bound))


def _dotted(name: str) -> cst.BaseExpression:
    return cst.parse_expression(name)


class ImportsOnV1(cst.CSTTransformer):
    """`from tensorflow import flags` -> `from tensorflow.compat.v1 import flags`;
    `from tensorflow.python.platform import tf_logging as logging` -> `from
    tensorflow.compat.v1 import logging`; `import tensorflow.X.Y as Z` likewise. The
    bound names never change; a statement whose names go to several homes becomes one
    statement per home, on the same line."""

    def leave_ImportFrom(self, original_node, updated_node):
        pairs = resolve.from_import_names(original_node)
        if not pairs:
            return updated_node
        homes = [home(full) for _, full in pairs]
        if not any(homes):
            return updated_node
        groups: dict = {}  # module ("" for a plain import) -> aliases, in the order written
        module = cst.helpers.get_full_name_for_node(original_node.module)
        for (alias, _), new in zip(pairs, homes):
            if new is None:
                groups.setdefault(module, []).append(alias)
                continue
            new_module, _, name = new.rpartition(".")
            asname = _as(alias, name)
            # `from tensorflow.contrib import slim` -> `import tf_slim as slim`.
            groups.setdefault(new_module, []).append(
                cst.ImportAlias(name=_dotted(name if new_module else new), asname=asname)
            )
        statements = [
            updated_node.with_changes(
                module=_dotted(module_name),
                # libcst writes the commas between names itself.
                names=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases],
            )
            if module_name
            else cst.Import(
                names=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
            )
            for module_name, aliases in groups.items()
        ]
        return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)

    def leave_Import(self, original_node, updated_node):
        names, statements = [], []
        for alias in updated_node.names:
            full = cst.helpers.get_full_name_for_node(alias.name)
            new = home(full) if alias.asname else None  # `import a.b` binds `a`: kept.
            module, _, name = (new or "").rpartition(".")
            if module == "tensorflow.compat.v1":
                # `import tensorflow.python.platform.gfile as gfile` -> `from
                # tensorflow.compat.v1 import gfile`: importing the module path
                # tensorflow.compat.v1.gfile would load a second module object.
                statements.append(
                    cst.ImportFrom(
                        module=_dotted(module),
                        names=[cst.ImportAlias(name=cst.Name(name), asname=_as(alias, name))],
                    )
                )
            else:
                names.append(alias.with_changes(name=_dotted(new)) if new else alias)
        if not statements:
            return updated_node.with_changes(names=names)
        if names:
            names = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in names]
            statements.insert(0, updated_node.with_changes(names=names))
        return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
