"""Text split into tokens, a block at a time (capture/split_tokens.py), against legacy queues.

Lines of 0 to 30 tokens (empty lines too) are split, turned into numbers, hashed, cut and
padded to a fixed length, counted; each scenario runs on TensorFlow's own queues and on
compat_input, and every batch must be legacy's, bit for bit. Each also says how compat_input
mapped it: a block at a time where the tokens end in a fixed shape, one example at a time
(with the op that stopped it named) where they do not.
"""

import numpy as np
import pytest
import tensorflow as tf

from compat_input._src.capture import vectorize
from helpers import assert_same
from helpers import differential
from helpers import write

tf1 = tf.compat.v1
LENGTH = 12


@pytest.fixture
def lines(tmp_path):
    rng = np.random.default_rng(5)
    paths = []
    for part in range(2):
        rows = []
        for _ in range(90):
            count = int(rng.integers(0, 31))
            # Runs of spaces, and a tab: what the split's delimiters and skip_empty decide.
            rows.append("  ".join(str(v) for v in rng.integers(-500, 500, count)) + " \t1")
        rows[7] = ""  # An empty line: no token.
        paths.append(write(str(tmp_path / f"tokens{part}.txt"), "\n".join(rows) + "\n"))
    return paths


def _tokens(api, paths, split):
    queue = api.string_input_producer(paths, num_epochs=1, shuffle=False)
    _, line = api.TextLineReader().read(queue)
    return line, split(line)


def _fixed(ids, length=LENGTH):
    return tf.reshape(tf.pad(ids, [[0, length]])[:length], [length])


def _mapped(build) -> str:
    before = len(vectorize.mappings)
    assert_same(build)
    ((_, how),) = vectorize.mappings[before:]
    return how


SPLITS = {
    "string_split": lambda line: tf1.string_split([line]).values,
    "string_split_tab": lambda line: tf1.string_split([line], delimiter="\t").values,
    "strings.split": lambda line: tf.strings.split([line]).values,
    "two_lines": lambda line: tf1.string_split([line, tf.strings.upper(line)]).values,
}


@pytest.mark.parametrize("split", sorted(SPLITS))
def test_tokens_padded_to_a_fixed_length_are_legacys_a_block_at_a_time(lines, split):
    def build(api):
        line, words = _tokens(api, lines, SPLITS[split])
        ids = tf.strings.to_number(words, tf.int32) if split != "string_split_tab" else words
        if split == "string_split_tab":
            ids = tf.strings.to_hash_bucket_fast(words, 1000)
        return api.batch([_fixed(ids), tf.size(words), line], 16, allow_smaller_final_batch=True)

    assert _mapped(build).startswith("vectorized")


def test_tokens_cut_then_computed_one_by_one_are_legacys(lines):
    def build(api):
        _, words = _tokens(api, lines, SPLITS["string_split"])
        first = words[:5]  # Fewer than 5 in many lines: still ragged.
        ids = tf.strings.to_number(first, tf.float32) * 0.5 + 1.0
        return api.batch(
            [_fixed(ids, 5), tf.shape(first), tf.size(ids)], 8, allow_smaller_final_batch=True
        )

    assert _mapped(build).startswith("vectorized")


def test_tokens_padded_with_a_value_of_their_own_are_legacys(lines):
    def build(api):
        _, words = _tokens(api, lines, SPLITS["string_split"])
        ids = tf.strings.to_number(words, tf.int64)
        # Padded by 3 with -7, cut to 2: lines of 0 or 1 tokens keep some of the -7s.
        short = tf.pad(ids, [[0, 3]], constant_values=-7)[:2]
        return api.batch([tf.reshape(short, [2])], 8, allow_smaller_final_batch=True)

    assert _mapped(build).startswith("vectorized")


def test_tokens_used_otherwise_run_one_example_at_a_time_as_before(lines):
    def build(api):
        line, split = _tokens(api, lines, lambda line: tf1.string_split([line]))
        dense = tf.sparse.to_dense(split, default_value="")[0]
        return api.batch(
            [_fixed(dense), line], 8, dynamic_pad=False, allow_smaller_final_batch=True
        )

    how = _mapped(build)
    assert how.startswith("per example") and "StringSplit" in how, how
    assert "test_split_tokens.py:" in how  # The program's own line.


@pytest.fixture
def rows_of_numbers(tmp_path):
    rng = np.random.default_rng(9)
    rows = [" ".join(f"{v:.3f}" for v in rng.normal(size=5)) for _ in range(70)]
    return [write(str(tmp_path / "rows.txt"), "\n".join(rows) + "\n")]


def test_tokens_of_a_count_the_program_fixed_are_legacys_a_block_at_a_time(rows_of_numbers):
    def build(api):
        _, words = _tokens(api, rows_of_numbers, SPLITS["string_split"])
        values = tf.strings.to_number(words)
        values.set_shape([5])  # A line of 5 numbers, as programs read space-separated rows.
        return api.batch([values * tf.reduce_max(values), values[1:3]], 8)

    assert _mapped(build).startswith("vectorized")


def test_a_line_of_another_count_fails_both_ways(tmp_path):
    # 12 tokens in 4 lines, but not 3 in each: no block of them may stack.
    path = write(str(tmp_path / "rows.txt"), "1 2 3\n4 5\n6 7 8 9\n1 1 1\n")

    def build(api):
        _, words = _tokens(api, [path], SPLITS["string_split"])
        values = tf.strings.to_number(words)
        values.set_shape([3])
        return api.batch([values], 4)

    before = len(vectorize.mappings)
    legacy, compat = differential(build)
    assert vectorize.mappings[before][1].startswith("vectorized")
    assert legacy.values == compat.values == []
    assert legacy.error is not None and compat.error is not None


@pytest.fixture
def labelled(tmp_path):
    rng = np.random.default_rng(11)
    rows = []
    for _ in range(80):
        features = " ".join(
            f"{k}:{v}" for k, v in enumerate(rng.integers(0, 9, rng.integers(1, 9)))
        )
        rows.append(f"{rng.integers(0, 2)} {features}".strip())
    return [write(str(tmp_path / "rows.libsvm"), "\n".join(rows) + "\n")]


def test_a_token_by_its_place_and_the_rest_are_legacys_a_block_at_a_time(labelled):
    def build(api):
        _, words = _tokens(api, labelled, SPLITS["string_split"])
        label = tf.strings.to_number(words[0], tf.int32)  # Every line has its label.
        pairs = tf.strings.regex_replace(words[1:], "^[0-9]+:", "")
        values = _fixed(tf.strings.to_number(pairs, tf.int32), 6)
        first = words[1]  # Every line has a pair.
        return api.batch(
            [label, values, _fixed(words[2:4], 2), first], 8, allow_smaller_final_batch=True
        )

    assert _mapped(build).startswith("vectorized")


def test_a_token_a_line_lacks_fails_both_ways(tmp_path):
    path = write(str(tmp_path / "rows.txt"), "1 2\n3 4\n5\n6 7\n")

    def build(api):
        _, words = _tokens(api, [path], SPLITS["string_split"])
        return api.batch([tf.strings.to_number(words[1])], 4)

    before = len(vectorize.mappings)
    legacy, compat = differential(build)
    assert vectorize.mappings[before][1].startswith("vectorized")
    assert legacy.values == compat.values == []
    assert legacy.error is not None and compat.error is not None


def _vocabulary_ids(words):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(["1", "2", "3", "-1"]), tf.constant([10, 20, 30, -10], tf.int64)
        ),
        -1,
    )
    return _fixed(table.lookup(words))


def _lengths(words):
    return tf.strings.length(words)


TOKEN_COMPUTATIONS = {
    # Every reduction on lines of 0 tokens too (the fixture's empty line).
    "lookup": _vocabulary_ids,
    "sum": lambda words: tf.reduce_sum(_lengths(words)),
    "prod_keepdims": lambda words: tf.reduce_prod(_lengths(words) % 3 + 1, keepdims=True),
    "max_float": lambda words: tf.reduce_max(tf.cast(_lengths(words), tf.float32)),
    "min_float": lambda words: tf.reduce_min(tf.strings.to_number(words), axis=-1),
    "characters": lambda words: _fixed(tf1.string_split(words[:1], delimiter="").values),
}


@pytest.mark.parametrize("computation", sorted(TOKEN_COMPUTATIONS))
def test_token_computations_are_legacys_a_block_at_a_time(lines, computation):
    def build(api):
        _, words = _tokens(api, lines, SPLITS["string_split"])
        return api.batch([TOKEN_COMPUTATIONS[computation](words)], 8)

    how = _mapped(build)
    # Splitting a split's tokens again is not converted: one example at a time, as before.
    assert how.startswith("per example" if computation == "characters" else "vectorized"), how


def test_a_float_sum_of_tokens_runs_one_example_at_a_time(lines):
    def build(api):
        _, words = _tokens(api, lines, SPLITS["string_split"])
        return api.batch([tf.reduce_sum(tf.strings.to_number(words))], 8)

    # A block would add in another order than each example's own sum: not the same bits.
    assert "sums floats" in _mapped(build)


def test_tokens_in_a_cond_branch_run_one_example_at_a_time(lines):
    def build(api):
        line, _ = _tokens(api, lines, lambda line: line)
        count = tf.cond(
            tf.strings.length(line) > 20,
            lambda: tf.size(tf1.string_split([line]).values),
            lambda: tf.constant(-1),
        )
        return api.batch([count, line], 8)

    # The branch runs for some examples of a block only: never converted for the block.
    assert _mapped(build).startswith("per example")
