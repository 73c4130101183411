"""Map functions run inline (one op after the other on the map's thread) only where
TensorFlow's single-threaded executor can run them (core/inline_runs.py)."""

import pytest
import tensorflow as tf

from helpers import WORLD
from helpers import assert_same
from helpers import examples
from helpers import write

tf1 = tf.compat.v1


def _maps(graph: tf.Graph) -> dict:
    """Each map's function name -> whether it may hand ops to the inter-op pool."""
    return {
        op.get_attr("f").name: op.get_attr("use_inter_op_parallelism")
        for op in graph.get_operations()
        if op.type in ("MapDataset", "ParallelMapDatasetV2")
    }


def _example_maps(graph: tf.Graph) -> dict:
    return {name: pool for name, pool in _maps(graph).items() if "examples" in name}


@pytest.mark.parametrize("blocks", [True, False])
def test_maps_of_plain_per_example_graphs_run_inline(tmp_path, blocks):
    lines = "".join(" ".join(str(i + k) for k in range(1 + i % 3)) + "\n" for i in range(30))
    f = write(str(tmp_path / "rows.txt"), lines)
    graphs = []

    def build(api):
        graphs.append(tf1.get_default_graph())
        queue = api.string_input_producer([f], num_epochs=2, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        ids = tf.strings.to_number(tf1.string_split([line]).values, tf.int32)
        if blocks:  # One number a line: examples of one shape, mapped a block at a time.
            ids = tf.size(ids) * 10
        return api.batch([ids], 4, dynamic_pad=not blocks, allow_smaller_final_batch=True)

    compat = assert_same(build)
    assert len(examples(compat)) == 60
    maps = _example_maps(graphs[-1])
    assert maps and not any(maps.values()), maps
    # The pipeline's own functions too: the producer's epochs, the counting.
    assert not any(_maps(graphs[-1]).values()), _maps(graphs[-1])


def test_a_function_holding_v1_control_flow_keeps_the_inter_op_pool(tmp_path):
    # A TF1 program's tf.cond is Switch and Merge, which the single-threaded executor
    # refuses only when the iterator first calls the function: that read would fail.
    lines = "".join(" ".join(str(i + k) for k in range(1 + i % 3)) + "\n" for i in range(30))
    f = write(str(tmp_path / "rows.txt"), lines)
    graphs = []

    def build(api):
        graphs.append(tf1.get_default_graph())
        queue = api.string_input_producer([f], num_epochs=2, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        ids = tf.strings.to_number(tf1.string_split([line]).values, tf.int32)
        ids = tf1.cond(tf.size(ids) > 1, lambda: ids * 2, lambda: ids - 1)
        return api.batch([ids], 4, dynamic_pad=True, allow_smaller_final_batch=True)

    compat = assert_same(build)
    assert len(examples(compat)) == 60
    held = [
        name
        for name, function in graphs[-1]._functions.items()
        if "examples" in name and any(n.op == "Switch" for n in function.definition.node_def)
    ]
    maps = _example_maps(graphs[-1])
    # Where the cond is v1's (TF1 behaviour), its function keeps the pool; TF2 behaviour's
    # cond is an `If`, which runs inline.
    assert maps and all(maps[name] == (name in held) for name in maps), (maps, held)
    assert held or WORLD == "tf2", "the TF1 program's cond should be v1's Switch and Merge"
