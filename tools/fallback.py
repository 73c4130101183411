"""Pass 1 for a file TensorFlow's upgrader cannot read: every TF1 name kept on tf.compat.v1.

tf_upgrade_v2 parses with pasta, which fails on some code that Python and libcst read
(facenet's `image[(sz1-sz2+v):(sz1+sz2+v), ...]`). Such a file is still migrated: each
TensorFlow name it uses, taken from the `tensorflow` module under any alias, where
TensorFlow 2 lacks it or has another object under it, is spelled `tf.compat.v1.<name>`.
In TF1 behaviour (which the codemod switches on) that is the very function the original
called, so no argument needs renaming and no value changes: the upgrader's renames are
only needed to reach TensorFlow 2's own functions. What this pass cannot decide (a name
tf.compat.v1 lacks as well) the names check (resolve.py) reports, as for any file.
"""

import libcst as cst
from libcst.metadata import QualifiedNameProvider

from . import findings
from . import imports
from . import rules


def v1_name(name: str):
    """`tensorflow.compat.v1.<path>` for the qualified `tensorflow.<path>` where that is
    what a TF1 program meant and TensorFlow 2 spells otherwise; else None."""
    if not name.startswith("tensorflow.") or name.startswith(
        ("tensorflow.compat.", "tensorflow.contrib")
    ):
        return None
    if name in rules.RENAMES or rules.keep_v1(name) or rules.moved(name):
        return None  # Pass 2 (or pass 0) serves it.
    return imports.v1_twin(name)


class KeepOnV1(cst.CSTTransformer):
    """`tf.<path>` -> `tf.compat.v1.<path>` on each whole dotted name where `v1_name` says."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self):
        super().__init__()
        self._inner: set = set()

    def visit_Attribute(self, node) -> None:
        self._inner.add(id(node.value))

    def leave_Attribute(self, original_node, updated_node):
        if id(original_node) in self._inner:
            return updated_node  # The whole name decides, not its prefixes.
        names = findings.imported_names(
            self.get_metadata(QualifiedNameProvider, original_node, set())
        )
        new = next(filter(None, map(v1_name, sorted(names))), None)
        root = findings.tensorflow_root(self, original_node) if new else None
        if root is None:
            return updated_node
        return findings.dotted(root, new.removeprefix("tensorflow."))


UNREADABLE = rules.Flag(
    "CI019",
    "note",
    "TensorFlow's upgrader could not read this file ({reason}); it was migrated all the "
    "same, every TensorFlow 1 name it uses kept on tf.compat.v1, which in TF1 behaviour is "
    "the function the original called",
    "the-codemod",
)


def keep_on_v1(module: cst.Module) -> cst.Module:
    return cst.MetadataWrapper(module).visit(KeepOnV1())
