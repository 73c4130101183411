"""Pass 0b: TF1 names whose TensorFlow 2 successor is not the same function stay TF1's.

tf_upgrade_v2 renames `tf.image.resize_images` to `tf.image.resize`, which samples other
pixel centers, and leaves `tf.image.draw_bounding_boxes(images, boxes)` to TensorFlow 2's,
which requires `colors`: the migrated program runs, or fails, and says nothing. A migrated
program runs in TF1 behaviour (the codemod writes `disable_v2_behavior()`), where
`tf.compat.v1.<name>` *is* the function the original called, so keeping that spelling
changes no number.

Which names are kept is found by testing the installed TensorFlow, not by reading its
documentation: a name the upgrader leaves or renames is safe when what it becomes is the
very object `tf.compat.v1.<name>` is. Every other one is kept, unless it is in `PROVEN`:
called plainly, the upgrader's call (its argument rewrites included) computes what the TF1
call computed, which tests/test_exact.py proves for each, bit for bit. A PROVEN name used
uncalled (`fn = tf.nn.dropout`) or called with `*args` is kept as well: the upgrader can
rewrite only the arguments it sees, and `fn(x, 0.5)` would then drop half, not keep half.
"""

import functools
import types

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider

from . import findings
from . import imports
from . import rules

# Elementwise math functions TensorFlow 2 exports as separate (dispatch-wrapped) objects
# that call the same kernels; tests/test_exact.py runs each both ways.
_MATH_UNARY = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh digamma erf erfc exp expm1 floor "
    "lgamma log log1p log_sigmoid negative reciprocal rint round rsqrt sigmoid sign sin sinh "
    "softplus sqrt square tan tanh"
).split()
_MATH_BINARY = "add divide divide_no_nan floormod maximum minimum mod multiply".split()
_REDUCTIONS = "reduce_all reduce_any reduce_logsumexp reduce_max reduce_mean reduce_min "
_REDUCTIONS = (_REDUCTIONS + "reduce_prod reduce_sum").split()

# TF1 names whose upgraded call is proven exact by tests/test_exact.py (one case each).
PROVEN = frozenset(
    [f"math.{name}" for name in _MATH_UNARY + _MATH_BINARY + _REDUCTIONS]
    + _REDUCTIONS
    + """argmax argmin math.argmax math.argmin expand_dims squeeze shape size pad transpose
    gather gather_nd boolean_mask constant convert_to_tensor ones_like zeros_like
    to_float to_double to_int32 to_int64 cond while_loop map_fn gradients name_scope device
    decode_raw decode_csv parse_single_example parse_example string_to_number
    nn.softmax nn.log_softmax nn.conv2d nn.max_pool nn.avg_pool nn.dropout nn.moments
    nn.sigmoid nn.tanh nn.relu6 nn.embedding_lookup nn.sigmoid_cross_entropy_with_logits
    nn.softmax_cross_entropy_with_logits nn.sparse_softmax_cross_entropy_with_logits
    data.Dataset data.TextLineDataset data.TFRecordDataset
    image.crop_and_resize extract_image_patches random.multinomial image.resize_area
    image.extract_glimpse random_poisson nn.max_pool_with_argmax
    io.decode_csv io.decode_raw image.extract_patches nn.avg_pool2d io.parse_example
    io.parse_single_example random.poisson strings.to_number""".split()
)


@functools.cache
def _upgrader():
    from tensorflow.tools.compatibility import tf_upgrade_v2

    return tf_upgrade_v2.TFAPIChangeSpec()


def _lookup(root, path: str):
    for part in path.split("."):
        try:
            root = getattr(root, part)
        except Exception:  # noqa: BLE001 - a lazy loader may fail any way; then it is absent.
            return None
    return root


def _tf():
    import tensorflow as tf

    return tf


@functools.cache
def changed(path: str):
    """What TensorFlow 2 makes of `tf.<path>` (a TF1 function or class), where it is not
    the TF1 object: the upgraded name (or its transformation), else None."""
    import tensorflow as tf

    original = _lookup(tf.compat.v1, path)
    if original is None or isinstance(original, types.ModuleType) or not callable(original):
        return None
    spec = _upgrader()
    old = f"tf.{path}"
    new = spec.symbol_renames.get(old, old)
    if old in spec.function_transformers:
        # A transformer rewrites the call first (resize_bilinear becomes tf.image.resize).
        return f"{new.replace('tf.compat.v1.', 'tf.', 1)} (the call rewritten)"
    if new.startswith("tf.compat.v1."):
        return None  # The upgrader keeps it on TF1's API itself.
    if _lookup(tf, new[3:]) is original:
        return None
    return new


def kept(path: str, called: bool):
    """Whether `tf.<path>` must keep its tf.compat.v1 spelling."""
    if changed(path) is None:
        return False
    return not (called and path in PROVEN)


def _flag(path: str) -> rules.Flag:
    return rules.Flag(
        "CI017",
        "note",
        f"tf.{path} stays tf.compat.v1.{path}: tf_upgrade_v2 would call TensorFlow 2's "
        f"{changed(path)}, another function (other values or arguments); in TF1 behaviour "
        f"tf.compat.v1.{path} is the original",
        "names-kept-on-tf-compat-v1",
    )


class KeepExact(cst.CSTTransformer):
    """`tf.<path>` -> `tf.compat.v1.<path>` where `kept(path)`; one note per name."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, keep_lines=frozenset()):
        super().__init__()
        self.notes: list = []  # (line, column, flag)
        # Lines whose PROVEN calls keep tf.compat.v1 all the same (migrate --verify found
        # the program differs with them upgraded), and the lines where one was upgraded.
        self.keep_lines = keep_lines
        self.proven_lines: set = set()
        self._plain_calls: set = set()
        self._noted: set = set()
        self._inner: set = set()  # Attributes with an attribute of theirs taken.

    def visit_Attribute(self, node) -> None:
        self._inner.add(id(node.value))

    def visit_Call(self, node) -> None:
        if not any(arg.star for arg in node.args):
            self._plain_calls.add(id(node.func))

    def leave_Attribute(self, original_node, updated_node):
        names = findings.imported_names(
            self.get_metadata(QualifiedNameProvider, original_node, set())
        )
        if len(names) != 1:
            return updated_node
        name = names.pop()
        if not name.startswith("tensorflow.") or name.startswith("tensorflow.compat."):
            return updated_node
        if name in rules.RENAMES or rules.keep_v1(name) or rules.moved(name):
            return updated_node  # Pass 2 (or pass 0) serves it.
        path = name[len("tensorflow.") :]
        if id(original_node) not in self._inner and _v1_module(path):
            # A module passed as a value (`find_class_by_name(name, [tf.train])`, then
            # `getattr(module, "AdamOptimizer")`): TF1's module, which has TF1's names;
            # the upgrader renames only the names it sees taken from a module.
            root = findings.tensorflow_root(self, original_node)
            return findings.dotted(root, f"compat.v1.{path}") if root is not None else updated_node
        start = self.get_metadata(PositionProvider, original_node).start
        called = id(original_node) in self._plain_calls and start.line not in self.keep_lines
        if not kept(path, called):
            if changed(path) is not None:
                self.proven_lines.add(start.line)
            return updated_node
        root = findings.tensorflow_root(self, original_node)
        if root is None:
            return updated_node  # `from tensorflow import image`: the upgrader leaves it too.
        if path not in self._noted and _lookup(_tf(), changed(path)[3:].split(" ")[0]):
            # Only where TensorFlow 2 has a function of that name: the rest (tf.flags,
            # tf.app) can only be spelled tf.compat.v1, and nothing is there to check.
            self._noted.add(path)
            self.notes.append((start.line, start.column + 1, _flag(path)))
        return findings.dotted(root, f"compat.v1.{path}")


def _v1_module(path: str) -> bool:
    """Whether `tf.<path>` is a module whose TF1 version (`tf.compat.v1.<path>`) the
    import forms' table (imports.home) would take instead."""
    return isinstance(_lookup(_tf().compat.v1, path), types.ModuleType) and bool(
        imports.home(f"tensorflow.{path}")
    )
