"""An input built inside the model's `tf.device('/gpu:0')` scope (tf_slim's clones dequeue
their prefetch queue there, towers build their batchers there): legacy's queue ops have GPU
kernels that keep data in host memory, tf.data's datasets and iterators have CPU kernels
only, so compat_input makes them on the host CPU of the device asked for (job and task
kept). Checked without a GPU: the ops' devices, and the values against legacy with soft
placement (the only way legacy runs a GPU scope on a machine without one)."""

import pytest
import tensorflow as tf

from compat_input._src.runtime import pipeline as pipeline_lib
from helpers import compat_api
from helpers import legacy_api

tf1 = tf.compat.v1

_SCOPE = "/job:localhost/replica:0/task:0/device:GPU:0"


def _build(api):
    x = api.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
    q = api.FIFOQueue(8, [tf.int32], shapes=[[]])
    api.add_queue_runner(api.QueueRunner(q, [q.enqueue([x * 10])]))
    with tf1.device(_SCOPE):
        y = api.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
        return [q.dequeue_many(2), api.batch([y], 3)]


def _run(api) -> tuple:
    with tf.Graph().as_default() as graph:
        reads = _build(api)
        config = tf1.ConfigProto(allow_soft_placement=True)
        values = []
        with tf1.Session(config=config) as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            for _ in range(3):
                values.append([sess.run(r).tolist() for r in reads])
            coord.request_stop()
            coord.join(threads)
        return graph, reads, values


def test_an_input_built_in_a_gpu_scope_is_made_on_its_host_cpu():
    graph, reads, _ = _run(compat_api())
    input_ops = [
        op
        for op in graph.get_operations()
        if op.type.endswith("Dataset") or op.type.startswith(("Iterator", "MakeIterator"))
    ]
    assert input_ops and pipeline_lib.built_pipelines
    for op in input_ops + [r.op for r in reads]:
        spec = tf.DeviceSpec.from_string(op.device)
        # The job and task the program asked for, the host's CPU.
        assert (spec.job, spec.task, spec.device_type) in (
            ("localhost", 0, "CPU"),
            (None, None, None),  # Made at the graph's root (state, shared constants).
        ), (op.name, op.device)
    assert {tf.DeviceSpec.from_string(r.device).device_type for r in reads} == {"CPU"}


def test_an_input_built_in_a_gpu_scope_gives_what_legacy_gives():
    _, _, legacy = _run(legacy_api())
    _, _, compat = _run(compat_api())
    assert compat == legacy


@pytest.mark.parametrize("scope", ["/device:CPU:0", None])
def test_an_input_built_on_the_cpu_or_anywhere_keeps_its_scope(scope):
    with tf.Graph().as_default():
        with tf1.device(scope):
            x = compat_api().range_input_producer(4, shuffle=False).dequeue()
            batch = compat_api().batch([x], 2)
    assert batch.device == (scope or "")


_CLUSTER: list = []


def _cluster():
    """One worker and one parameter server in this process, made once (their ports stay
    taken until the process exits)."""
    if not _CLUSTER:
        import socket

        ports = []
        for _ in range(2):
            with socket.socket() as free:
                free.bind(("localhost", 0))
                ports.append(free.getsockname()[1])
        cluster = tf1.train.ClusterSpec(
            {"worker": [f"localhost:{ports[0]}"], "ps": [f"localhost:{ports[1]}"]}
        )
        _CLUSTER.extend(tf1.train.Server(cluster, job, 0) for job in ("worker", "ps"))
    return _CLUSTER


def _replicated(api) -> tuple:
    """Between-graph replication as TF1's distributed trainers build it: the graph inside
    `replica_device_setter` (variables on the parameter server), a TFRecord file of 20
    records read for 2 epochs by `batch`, a session on the worker summing what it reads
    into a variable until the input ends: (batches, the sum, names of the ops on ps)."""
    import os
    import tempfile

    worker, _ = _cluster()
    path = os.path.join(tempfile.mkdtemp(), "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(20):
            writer.write(str(i).encode())
    with tf.Graph().as_default() as graph:
        setter = tf1.train.replica_device_setter(worker_device="/job:worker/task:0", ps_tasks=1)
        with tf1.device(setter):
            files = api.string_input_producer([path], num_epochs=2, shuffle=False)
            _, record = api.TFRecordReader().read(files)
            batch = api.batch([tf.strings.to_number(record, tf.int64)], 4)
            step = tf1.train.get_or_create_global_step()
            total = tf1.get_variable("total", [], tf.int64, tf1.zeros_initializer())
            train = tf.group(tf1.assign_add(total, tf.reduce_sum(batch)), step.assign_add(1))
        read = []
        # A plain session on the worker's target: a MonitoredSession would make its session
        # again on a transient error, and read the input again.
        with tf1.Session(worker.target) as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            try:
                while True:
                    read.append(sess.run([batch, train])[0].tolist())
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
            summed = sess.run(total)
        on_ps = {op.name for op in graph.get_operations() if "/job:ps" in op.device}
    return read, summed, on_ps


def test_a_replicated_trainer_reads_its_input_on_its_worker_as_legacy():
    # replica_device_setter puts every variable op on a parameter server. Legacy's queues
    # are no variables: they ran on the worker. compat_input's pipeline state (its epochs,
    # its marks) is read inside tf.data functions, which cannot reach a resource on another
    # task: it stays on the worker, with the input (the program's variables go to ps).
    legacy = _replicated(legacy_api())
    compat = _replicated(compat_api())
    assert compat[0] == legacy[0] and len(legacy[0]) == 10
    assert compat[1] == legacy[1] == 2 * sum(range(20))
    # The program's variables on the parameter server, both ways.
    assert {"total", "global_step"} <= legacy[2] & compat[2]
