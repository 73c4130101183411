"""tf.contrib.training's sampling batchers, `rejection_sample` and `stratified_sample`, on
the batchers of batching.py.

Legacy chained two queues: a batch of one example at a time (to take `enqueue_many`
input apart), then a `maybe_batch` that keeps each example with its acceptance
probability, drawing one uniform number per example. The same chain of compat_input's
batchers draws the same numbers in the same order, seeded or not.
"""

import tensorflow as tf

from compat_input._src.batchers import batching
from compat_input._src.batchers import legacy_arguments
from compat_input._src.core import tracing

tf1 = tf.compat.v1


def _one_at_a_time(tensor_list: list, threads: int, capacity: int) -> list:
    """`enqueue_many` input as single examples, as legacy's batch of size 1 made them."""
    batched = batching.batch(
        tensor_list, batch_size=1, num_threads=threads, capacity=capacity, enqueue_many=True
    )
    return [tf.squeeze(t, [0]) for t in _as_list(batched)]


def _as_list(batched) -> list:
    # A queue of one tensor dequeued a bare tensor; contrib returned a list either way.
    return batched if isinstance(batched, list) else [batched]


def _check_batch_dimension(tensors: list, size) -> None:
    """ValueError where a tensor has no batch dimension, or a known one other than a known
    `size` (a dimension is an int in TF2 behaviour, a Dimension in TF1's)."""
    for tensor in tensors:
        first = tensor.shape.with_rank_at_least(1)[0]
        tf.TensorShape([first]).assert_is_compatible_with(tf.TensorShape([size]))


def _verify_data_inputs(tensor_list: list) -> list:
    """Every tensor has a batch dimension, and they agree where known."""
    _check_batch_dimension(tensor_list, tensor_list[0].shape.with_rank_at_least(1)[0])
    return tensor_list


@tracing.without_autograph
def rejection_sample(
    tensors,
    accept_prob_fn,
    batch_size,
    queue_threads=1,
    enqueue_many=False,
    prebatch_capacity=16,
    prebatch_threads=1,
    runtime_checks=False,
    name=None,
):
    """Drop-in replacement for `tf.contrib.training.rejection_sample`.

    Differences: served by tf.data through compat_input's `batch` and `maybe_batch` (their
    differences apply); the same uniform draws decide which examples are kept.
    """
    with tf1.variable_scope(name, "rejection_sample", tensors):
        tensor_list = legacy_arguments.convert(list(tensors))
        if enqueue_many:
            tensor_list = _one_at_a_time(
                _verify_data_inputs(tensor_list), prebatch_threads, prebatch_capacity
            )
        probability = accept_prob_fn(tensor_list)
        if runtime_checks:
            checks = [
                tf1.assert_less_equal(0.0, probability),
                tf1.assert_less_equal(probability, 1.0),
            ]
            with tf.control_dependencies(checks):
                probability = tf.identity(probability, name="prob_with_checks")
        return _as_list(
            batching.maybe_batch(
                tensor_list,
                keep_input=tf1.random_uniform([]) < probability,
                batch_size=batch_size,
                num_threads=queue_threads,
            )
        )


def _estimate_data_distribution(labels, num_classes: int, smoothing_constant=10):
    """The share of each class among the labels seen so far, from counts that start at
    `smoothing_constant` each (so no share is ever 0)."""
    if smoothing_constant <= 0:
        raise ValueError(f"smoothing_constant must be nonzero, got {smoothing_constant}.")
    # A resource variable: its updates run inside the tf.data pipeline.
    seen = tf1.Variable(
        [smoothing_constant] * num_classes,
        trainable=False,
        name="class_count",
        dtype=tf.int64,
        use_resource=True,
    )
    counts = seen.assign_add(tf.reduce_sum(tf.one_hot(labels, num_classes, dtype=tf.int64), 0))
    return tf.cast(counts / tf.reduce_sum(counts), tf.float32)


def _verify_input(tensor_list: list, labels, probs_list: list):
    """contrib's checks of sampling input: at graph build where shapes say enough, else
    when run (labels in [0, classes), batch sizes equal and positive, probabilities
    non-negative and summing to 1)."""
    checked_probs_list = []
    for probs in probs_list:
        probs.shape.assert_is_fully_defined()
        probs.shape.assert_has_rank(1)
        tolerance = 1e-6
        total = tf.reduce_sum(probs)
        checks = [
            tf1.assert_non_negative(probs),
            tf1.assert_less(total, 1.0 + tolerance),
            tf1.assert_less(1.0 - tolerance, total),
        ]
        with tf.control_dependencies(checks):
            checked_probs_list.append(tf.identity(probs))
    classes = checked_probs_list[0].shape.num_elements()
    if any(p.shape.num_elements() != classes for p in checked_probs_list):
        raise ValueError(
            "Probability parameters must have the same length: got "
            f"{[p.shape.num_elements() for p in checked_probs_list]}."
        )
    labels.shape.assert_has_rank(1)
    _check_batch_dimension(tensor_list, labels.shape[0])
    size = tf.shape(labels)[0]
    positive = tf1.assert_positive(size)
    with tf.control_dependencies([positive]):
        labels = tf.identity(labels)
    checked = []
    for tensor in tensor_list:
        with tf.control_dependencies([positive, tf1.assert_equal(tf.shape(tensor)[0], size)]):
            checked.append(tf.identity(tensor))
    label_checks = [
        tf1.assert_integer(labels),
        tf1.assert_non_negative(labels),
        tf1.assert_less(labels, tf.cast(classes, labels.dtype)),
    ]
    with tf.control_dependencies(label_checks):
        labels = tf.identity(labels)
    return checked, labels, checked_probs_list


def _calculate_acceptance_probabilities(init_probs, target_probs):
    """Per class, the chance to keep an example so that kept examples follow `target_probs`
    when the data follows `init_probs`: a_i = (t_i / p_i) / max_j(t_j / p_j), 0 where p_i
    is 0."""
    ratio = target_probs / init_probs
    ratio = tf1.where(tf.math.is_nan(ratio), tf.zeros_like(ratio), ratio)
    return ratio / tf.reduce_max(ratio)


@tracing.without_autograph
def stratified_sample(
    tensors,
    labels,
    target_probs,
    batch_size,
    init_probs=None,
    enqueue_many=False,
    queue_capacity=16,
    threads_per_queue=1,
    name=None,
):
    """Drop-in replacement for `tf.contrib.training.stratified_sample`.

    Differences: served by tf.data through compat_input's `batch` and `maybe_batch`;
    with `init_probs=None` the class shares are estimated from the labels of the examples
    as they are sampled (legacy's estimate read one more input example per sample); no
    "Proportion of examples rejected by sampler is high" print.
    """
    tensors = list(tensors)  # A bare tensor is not iterable in a graph: TypeError, as legacy.
    with tf1.name_scope(name, "stratified_sample", tensors + [labels]):
        tensor_list = legacy_arguments.convert(list(tensors))
        labels = tf.convert_to_tensor(labels)
        target_probs = tf.convert_to_tensor(target_probs, tf.float32)
        if not enqueue_many:
            tensor_list = [tf.expand_dims(t, 0) for t in tensor_list]
            labels = tf.expand_dims(labels, 0)
        estimate = init_probs is None
        if estimate:
            target_probs.shape.assert_is_fully_defined()
            init_probs = tf.fill([target_probs.shape.num_elements()], 1.0)  # Checked shape only.
        else:
            init_probs = tf.convert_to_tensor(init_probs, tf.float32)
        tensor_list, labels, [init_probs, target_probs] = _verify_input(
            tensor_list, labels, [init_probs, target_probs]
        )
        *examples, label = _one_at_a_time(tensor_list + [labels], threads_per_queue, queue_capacity)
        if estimate:
            classes = target_probs.shape.num_elements()
            init_probs = _estimate_data_distribution(tf.expand_dims(label, 0), classes)
        valid = tf.reduce_all(tf.logical_or(tf.not_equal(init_probs, 0), tf.equal(target_probs, 0)))
        zero_share = tf1.Assert(
            valid,
            [
                "All classes with zero initial probability must also have zero target "
                "probability: ",
                init_probs,
                target_probs,
            ],
        )
        with tf.control_dependencies([zero_share]):
            init_probs = tf.identity(init_probs)
        accept = _calculate_acceptance_probabilities(init_probs, target_probs)
        batched = batching.maybe_batch(
            [*examples, label],
            keep_input=tf1.random_uniform([]) < tf.gather(accept, label),
            batch_size=batch_size,
            num_threads=threads_per_queue,
        )
        return batched[:-1], batched[-1]
