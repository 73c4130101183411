"""Migration never changes a number: every TF1 name migrates to itself, or is proven exact.

Two proofs. Every function and class a TF1 program can reach as `tf.<path>` is migrated
(the codemod whole: tf_upgrade_v2 and our passes) and what the migrated name resolves to
must be the very object `tf.compat.v1.<path>` is, or a name compat_input serves, or carry
an error finding. And each name in `exact.PROVEN`, which keeps TensorFlow 2's spelling
when called plainly, is called both ways here, the original with TF1's API and the
migrated copy as written, in seeded graphs: the fetched values must be identical, bit for
bit. The upgrader alone fails both (the last tests), so both can fail.
"""

import ast
import types

import numpy as np
import pytest
import tensorflow as tf
from compat_input_tools import codemod
from compat_input_tools import exact
from compat_input_tools import rules
from compat_input_tools import upgrader


def _tf1_names() -> list:
    """Every public function and class of tf.compat.v1, by its path under it."""
    found, seen = [], set()

    def walk(module, prefix):
        for attr in sorted(dir(module)):
            if attr.startswith("_") or attr == "compat":
                continue
            try:
                value = getattr(module, attr)
            except Exception:  # noqa: BLE001 - a lazy module (Keras 3's layers) may refuse.
                continue
            if isinstance(value, types.ModuleType):
                name = getattr(value, "__name__", "")
                if name.startswith("tensorflow._api.v2.compat.v1.") and id(value) not in seen:
                    seen.add(id(value))
                    walk(value, f"{prefix}{attr}.")
            elif callable(value):
                found.append(f"{prefix}{attr}")

    walk(tf.compat.v1, "")
    return found


def _lookup(path: str):
    value = tf
    for part in path.split("."):
        value = getattr(value, part)
    return value


def test_every_tf1_name_migrates_to_itself():
    names = _tf1_names()
    assert len(names) > 3000, "the walk lost tf.compat.v1"
    # The names no table of the upgrader touches and that stay TensorFlow 2's: the same
    # object without migrating (checked), so the migration only needs the others.
    spec = exact._upgrader()
    tables = (spec.symbol_renames, spec.function_transformers, spec.function_keyword_renames)
    touched = [n for n in names if any(f"tf.{n}" in t for t in tables) or exact.changed(n)]
    for path in sorted(set(names) - set(touched)):
        assert _lookup(path) is _lookup(f"compat.v1.{path}"), path
    source = "import tensorflow as tf\n" + "".join(
        f"n{index} = tf.{path}\n" for index, path in enumerate(touched)
    )
    outcome = codemod.migrate_source(source, "names.py")
    errors = {f.line - 1 for f in outcome.findings if f.flag.severity == "error"}
    wrong = []
    for statement in ast.parse(outcome.code).body:
        if not isinstance(statement, ast.Assign) or not statement.targets[0].id.startswith("n"):
            continue
        index = int(statement.targets[0].id[1:])
        path = touched[index]
        migrated = ast.unparse(statement.value)
        if index + 1 in errors:
            continue
        if migrated.startswith("compat_input."):
            # Served (rules.RENAMES): the differential tests prove those.
            assert migrated[len("compat_input.") :] in rules.RENAMES.values(), migrated
            continue
        try:
            value = eval(migrated, {"tf": tf})  # noqa: S307 - names of our own making.
        except Exception as error:  # noqa: BLE001
            wrong.append(f"tf.{path} -> {migrated}: {type(error).__name__}")
            continue
        if value is not _lookup(f"compat.v1.{path}"):
            wrong.append(f"tf.{path} -> {migrated}: another object")
    assert not wrong, "\n".join(wrong)
    assert len(touched) > 1000


_UNARY = {f"math.{n}": f"tf.math.{n}(p)" for n in exact._MATH_UNARY}
_BINARY = {f"math.{n}": f"tf.math.{n}(p, m)" for n in exact._MATH_BINARY}
_REDUCE = {
    f"{prefix}{n}": f"tf.{prefix}{n}({'m > 0' if n in ('reduce_all', 'reduce_any') else 'm'}"
    ", 1, keep_dims=True)"
    for n in exact._REDUCTIONS
    for prefix in ("", "math.")
}
_EXAMPLE = "{'x': tf.FixedLenFeature([2], tf.float32), 'y': tf.VarLenFeature(tf.int64)}"
# One call per PROVEN name, in TF1's spelling, with the TF1 arguments the upgrader rewrites.
CASES = {
    **_UNARY,
    **_BINARY,
    **_REDUCE,
    "argmax": "tf.argmax(m, dimension=1)",
    "argmin": "tf.argmin(m, 0, output_type=tf.int32)",
    "math.argmax": "tf.math.argmax(m, 1)",
    "math.argmin": "tf.math.argmin(m, dimension=0)",
    "expand_dims": "tf.expand_dims(m, dim=1)",
    "squeeze": "tf.squeeze(tf.reshape(m, [4, 1, 5]), squeeze_dims=[1])",
    "shape": "tf.shape(m, out_type=tf.int64)",
    "size": "tf.size(m)",
    "pad": "tf.pad(m, [[1, 1], [2, 0]], 'REFLECT')",
    "transpose": "tf.transpose(img, [0, 3, 1, 2])",
    "gather": "tf.gather(tf.transpose(m), i, validate_indices=True)",
    "gather_nd": "tf.gather_nd(m, [[0, 1], [3, 4]])",
    "boolean_mask": "tf.boolean_mask(m, m[:, 0] > 0)",
    "constant": "tf.constant([[1.5, 2.0]], dtype=tf.float64)",
    "convert_to_tensor": "tf.convert_to_tensor([1, 2], preferred_dtype=tf.int64)",
    "ones_like": "tf.ones_like(m, optimize=False)",
    "zeros_like": "tf.zeros_like(i)",
    "to_float": "tf.to_float(i)",
    "to_double": "tf.to_double(m)",
    "to_int32": "tf.to_int32(m * 10.0)",
    "to_int64": "tf.to_int64(m * 10.0)",
    "cond": "tf.cond(tf.reduce_sum(m) > 0, lambda: m * 2.0, lambda: -m)",
    "while_loop": "tf.while_loop(lambda k, a: k < 3, lambda k, a: (k + 1, a * 2.0), [0, m])",
    "map_fn": "tf.map_fn(lambda r: r * 2.0, m)",
    "gradients": "tf.gradients(tf.reduce_sum(m * m * p), [m, p], colocate_gradients_with_ops=True)",
    "name_scope": "with tf.name_scope(None, 'block', [m]):\n        return tf.identity(m).name",
    "device": "with tf.device('/cpu:0'):\n        return tf.identity(m).device",
    "decode_raw": "tf.decode_raw(blob, tf.uint16, little_endian=False)",
    "decode_csv": "tf.decode_csv(lines, record_defaults=[[0.0], [''], [0]], field_delim=',')",
    "parse_single_example": f"tf.parse_single_example(records[0], {_EXAMPLE})",
    "parse_example": f"tf.parse_example(records, {_EXAMPLE})",
    "string_to_number": "tf.string_to_number(['1.5', '-2'], out_type=tf.float64)",
    "nn.softmax": "tf.nn.softmax(m, dim=0)",
    "nn.log_softmax": "tf.nn.log_softmax(m, dim=1)",
    "nn.conv2d": "tf.nn.conv2d(img, w, strides=[1, 1, 1, 1], padding='SAME', "
    "use_cudnn_on_gpu=True)",
    "nn.max_pool": "tf.nn.max_pool(img, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding='VALID')",
    "nn.avg_pool": "tf.nn.avg_pool(img, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME')",
    # Seeded by the graph only: the op's seed comes from the ops built before it.
    "nn.dropout": "tf.nn.dropout(m, 0.7)",
    "nn.moments": "tf.nn.moments(img, axes=[0, 1, 2], keep_dims=True)",
    "nn.sigmoid": "tf.nn.sigmoid(m)",
    "nn.tanh": "tf.nn.tanh(m)",
    "nn.relu6": "tf.nn.relu6(m * 10.0)",
    "nn.embedding_lookup": "tf.nn.embedding_lookup(tf.transpose(m), i, validate_indices=True)",
    "nn.sigmoid_cross_entropy_with_logits": "tf.nn.sigmoid_cross_entropy_with_logits("
    "labels=onehot, logits=m)",
    "nn.softmax_cross_entropy_with_logits": "(lambda loss: (loss, tf.gradients(loss, [m])))("
    "tf.nn.softmax_cross_entropy_with_logits(labels=onehot, logits=m))",
    "nn.sparse_softmax_cross_entropy_with_logits": "tf.nn.sparse_softmax_cross_entropy_"
    "with_logits(labels=i, logits=m)",
    "data.Dataset": "tf.data.Dataset.from_tensor_slices(m).map(lambda r: r * 2.0).batch(3)"
    ".make_one_shot_iterator().get_next()",
    "data.TextLineDataset": "tf.data.TextLineDataset(text_path).make_one_shot_iterator()"
    ".get_next()",
    "image.crop_and_resize": "tf.image.crop_and_resize(img, [[0.1, 0.2, 0.8, 0.7]], [1], "
    "[4, 4], extrapolation_value=0.5)",
    "extract_image_patches": "tf.extract_image_patches(img, [1, 2, 2, 1], [1, 3, 3, 1], "
    "[1, 1, 1, 1], 'VALID')",
    "random.multinomial": "tf.random.multinomial(tf.log([[0.2, 0.3, 0.5]]), 6)",
    "image.resize_area": "tf.image.resize_area(img, [5, 5])",
    "image.extract_glimpse": "tf.image.extract_glimpse(img, [3, 3], [[0.1, 0.2], [-0.3, 0.4]])",
    "random_poisson": "tf.random_poisson([2.0, 5.0], [3], seed=2)",
    "nn.max_pool_with_argmax": "tf.nn.max_pool_with_argmax(img, [1, 2, 2, 1], [1, 2, 2, 1], "
    "'VALID')",
    # What the upgrader renames PROVEN names to, read again as TF1 names: a second
    # migration of a migrated file changes nothing.
    "io.decode_csv": "tf.io.decode_csv(lines, record_defaults=[[0.0], [''], [0]])",
    "io.decode_raw": "tf.io.decode_raw(blob, tf.uint16)",
    "image.extract_patches": "tf.image.extract_patches(img, [1, 2, 2, 1], [1, 3, 3, 1], "
    "[1, 1, 1, 1], 'VALID')",
    "nn.avg_pool2d": "tf.nn.avg_pool2d(img, [1, 3, 3, 1], [1, 2, 2, 1], 'SAME')",
    "io.parse_example": f"tf.io.parse_example(records, {_EXAMPLE})",
    "io.parse_single_example": f"tf.io.parse_single_example(records[1], {_EXAMPLE})",
    "random.poisson": "tf.random.poisson([2.0, 5.0], [3], seed=2)",
    "strings.to_number": "tf.strings.to_number(['1.5', '-2'], out_type=tf.float64)",
    "data.TFRecordDataset": "tf.data.TFRecordDataset(record_path).make_one_shot_iterator()"
    ".get_next()",
}
_ARGS = "m, p, img, w, i, onehot, lines, records, blob, text_path, record_path"


def _module(cases: dict) -> str:
    lines = ["import tensorflow as tf", ""]
    for index, body in enumerate(cases.values()):
        lines.append(f"def case_{index}({_ARGS}):")
        lines.append(f"    {body}" if body.startswith("with ") else f"    return {body}")
    return "\n".join(lines) + "\n"


def _inputs(tmp_path) -> dict:
    rng = np.random.RandomState(0)
    text_path = str(tmp_path / "lines.txt")
    with open(text_path, "w") as f:
        f.write("a,1\nb,2\n")
    example = tf.train.Example(
        features=tf.train.Features(
            feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -1.5])),
                "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 4, 5])),
            }
        )
    ).SerializeToString()
    record_path = str(tmp_path / "records.tfrecord")
    with tf.io.TFRecordWriter(record_path) as writer:
        writer.write(example)
    return {
        "m": rng.uniform(-1, 1, (4, 5)).astype(np.float32),
        "p": rng.uniform(0.1, 0.9, (4, 5)).astype(np.float32),
        "img": rng.uniform(0, 1, (2, 8, 8, 3)).astype(np.float32),
        "w": rng.uniform(-1, 1, (3, 3, 3, 4)).astype(np.float32),
        "i": np.array([0, 3, 1, 4], np.int32),
        "onehot": np.eye(5, dtype=np.float32)[[0, 3, 1, 4]],
        "lines": np.array([b"1.5,a,3", b"-2,b,4"]),
        "records": np.array([example, example]),
        "blob": np.array(b"\x01\x02\x03\x04"),
        "text_path": text_path,
        "record_path": record_path,
    }


def _run(namespace: dict, index: int, inputs: dict):
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(7)
        fed = {k: v if isinstance(v, str) else tf.constant(v) for k, v in inputs.items()}
        fetches = namespace[f"case_{index}"](**fed)
        # A random op after the call, seeded by the graph only: its op seed counts the ops
        # built before it, so a call that builds more or fewer ops than TF1's changes what
        # every later unseeded-op draw of a seeded program gives.
        later = tf.compat.v1.random_uniform([3])
        with tf.compat.v1.Session() as sess:
            if isinstance(fetches, (str, bytes)):
                return fetches, sess.run(later)
            return sess.run([fetches, later])


def _leaves(value) -> list:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _leaves(value[key])]
    if isinstance(value, (list, tuple)) or hasattr(value, "_fields"):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.asarray(value)]


def _versions(cases: dict, migrate) -> tuple:
    source = _module(cases)
    original, migrated = {}, {}
    # The original as TF1 ran it: its `tf` is TF1's API.
    exec(source.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf"), original)  # noqa: S102
    exec(migrate(source), migrated)  # noqa: S102
    return original, migrated


@pytest.fixture(scope="module")
def versions():
    return _versions(CASES, lambda source: codemod.migrate_source(source, "cases.py").code)


def test_every_proven_name_has_a_case():
    assert set(CASES) == exact.PROVEN


@pytest.mark.parametrize("index, name", list(enumerate(CASES)))
def test_proven_call_computes_what_tf1_computed(versions, tmp_path, index, name):
    """Its values, and a later graph-seeded draw (the same number of ops built)."""
    original, migrated = versions
    assert exact.changed(name) is not None, f"tf.{name} is TF1's own object: no case needed"
    inputs = _inputs(tmp_path)
    want, got = _run(original, index, inputs), _run(migrated, index, inputs)
    want, got = _leaves(want), _leaves(got)
    assert len(want) == len(got)
    for a, b in zip(want, got):
        assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
        np.testing.assert_array_equal(a, b)


# Calls whose TensorFlow 2 successor tf_upgrade_v2 picks computes other values, or fails.
CHANGED = {
    "image.resize_images": "tf.image.resize_images(img, [5, 5])",
    "image.resize_bilinear": "tf.image.resize_bilinear(img, [5, 5])",
    "image.draw_bounding_boxes": "tf.image.draw_bounding_boxes(img, [[[0.1, 0.1, 0.6, 0.6]], "
    "[[0.2, 0.3, 0.9, 0.8]]])",
    "image.resize_bicubic": "tf.image.resize_bicubic(img, [5, 5])",
    "image.resize_nearest_neighbor": "tf.image.resize_nearest_neighbor(img, [5, 5])",
    "image.sample_distorted_bounding_box": "tf.image.sample_distorted_bounding_box([8, 8, 3], "
    "[[[0.1, 0.1, 0.9, 0.9]]], seed=4)",
}


@pytest.mark.parametrize("index, name", list(enumerate(CHANGED)))
def test_kept_call_computes_what_tf1_computed(tmp_path, index, name):
    """The calls the issue found (and what the upgrader alone turns them into, which
    differs or fails: the planted bug these tests must catch)."""
    assert exact.kept(name, called=True)
    inputs = _inputs(tmp_path)
    original, migrated = _versions(
        CHANGED, lambda source: codemod.migrate_source(source, "cases.py").code
    )
    want, got = _leaves(_run(original, index, inputs)), _leaves(_run(migrated, index, inputs))
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
    _, upgraded = _versions(CHANGED, lambda source: upgrader.upgrade(source, "c.py")[0])
    try:
        alone = _leaves(_run(upgraded, index, inputs))
    except Exception:  # noqa: BLE001 - draw_bounding_boxes without `colors`, ...
        return
    assert any(a.shape != b.shape or not np.array_equal(a, b) for a, b in zip(want, alone)), (
        f"tf_upgrade_v2's own rename of tf.{name} computes the same: not a case for keeping"
    )
