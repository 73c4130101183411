"""No wait at the end: every iterator compat_input makes runs without tf.data's tuning
thread, whose destructor made a session's close wait out its sleep (the PTB tutorial's
`managed_session` exit took 16-19 s in 2 of 3 runs; benchmarks/close.py times it)."""

import tensorflow as tf

import compat_input
from compat_input._src.runtime import iterators

tf1 = tf.compat.v1


def _untuned_iterators(graph_def, functions: dict) -> list:
    """(op name, whether its dataset is wrapped in compat_input's options) of every
    one-shot and initializable iterator of `graph_def`."""
    nodes = {n.name: n for n in graph_def.node}
    found = []
    for node in graph_def.node:
        if node.op == "OneShotIterator":
            body = functions[node.attr["dataset_factory"].func.name]
            ours = [n for n in body.node_def if n.op == "OptionsDataset"]
            found.append((node.name, bool(ours) and _is_ours(ours[-1])))
        elif node.op in ("MakeIterator",):
            dataset = nodes[node.input[0].split(":")[0].lstrip("^")]
            found.append((node.name, dataset.op == "OptionsDataset" and _is_ours(dataset)))
    return found


def _is_ours(node) -> bool:
    return node.attr["serialized_options"].s == iterators._serialized_options()


def _build(api):
    ids = api.range_input_producer(10, shuffle=False).dequeue()
    value = tf.strings.as_string(ids)
    return api.batch([ids, value], 2)


def test_every_iterator_of_a_served_graph_runs_without_the_tuning_thread():
    graph = tf.Graph()
    with graph.as_default():
        batch = _build(compat_input)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            sess.run(batch)
        meta = tf1.train.export_meta_graph()
    functions = {f.signature.name: f for f in meta.graph_def.library.function}
    found = _untuned_iterators(meta.graph_def, functions)
    # The runner's own (range(0), which imported runners read), and the pipelines'.
    assert any(name.startswith("compat_input_end") for name, _ in found), found
    assert len(found) >= 2 and all(ours for _, ours in found), found
    # Imported, the graph runs its runner's iterator through TensorFlow's own threads.
    with tf.Graph().as_default():
        tf1.train.import_meta_graph(meta)
        batch_name = batch[0].name
        imported = tf1.get_default_graph()
        with tf1.Session() as sess:
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            first = sess.run(imported.get_tensor_by_name(batch_name))
            coord.request_stop()
            coord.join(threads)
    assert first.tolist() == [0, 1]
