"""tf.contrib functions with no home in TensorFlow 2 or in a maintained package.

`compat-input migrate` copies the source of each one a program calls into the migrated
file, after its imports, and calls it there: the program computes what it computed on
TensorFlow 1, and carries no dependency for it. Each function imports what it uses
inside its body, so that it reads the same whatever the file calls TensorFlow.
"""


def _contrib_sequence_loss(
    logits,
    targets,
    weights,
    average_across_timesteps=True,
    average_across_batch=True,
    sum_over_timesteps=False,
    sum_over_batch=False,
    softmax_loss_function=None,
    name=None,
):
    """tf.contrib.seq2seq.sequence_loss of TensorFlow 1.15, written into this file by
    `compat-input migrate` (tf.contrib is gone in TensorFlow 2): the weighted
    cross-entropy of `logits` [batch, time, classes] against `targets` [batch, time],
    averaged or summed over the axes the arguments name."""
    import tensorflow

    # An attribute, not `import tensorflow.compat.v1`: that import makes a second module
    # object for tf.compat.v1 where TensorFlow registered it under another name.
    tf = tensorflow.compat.v1

    for tensor, rank, what in (
        (logits, 3, "logits"),
        (targets, 2, "targets"),
        (weights, 2, "weights"),
    ):
        if len(tensor.get_shape()) != rank:
            raise ValueError(
                f"sequence_loss: {what} must have rank {rank}, got {tensor.get_shape()}"
            )
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot both be True")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot both be True")
    with tf.name_scope(name, "sequence_loss", [logits, targets, weights]):
        flat_logits = tf.reshape(logits, [-1, tf.shape(logits)[2]])
        flat_targets = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=flat_targets, logits=flat_logits
            )
        else:
            loss = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        loss *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.div_no_nan(tf.reduce_sum(loss), tf.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = tf.cast(tf.count_nonzero(weights), loss.dtype)
            return tf.div_no_nan(tf.reduce_sum(loss), count)
        loss = tf.reshape(loss, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tf.div_no_nan(tf.reduce_sum(loss, axis=axis), tf.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = tf.cast(tf.count_nonzero(weights, axis=axis), loss.dtype)
            return tf.div_no_nan(tf.reduce_sum(loss, axis=axis), count)
        return loss


def _contrib_flipped_softmax_xent(logits, labels, dim=-1, name=None):
    """tf.contrib.nn.deprecated_flipped_softmax_cross_entropy_with_logits of TensorFlow 1.x,
    written into this file by `compat-input migrate` (tf.contrib is gone in TensorFlow 2):
    tf.compat.v1.nn.softmax_cross_entropy_with_logits with `logits` first, as TensorFlow
    0.12 took them (no gradient into `labels`)."""
    import tensorflow

    return tensorflow.compat.v1.nn.softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, dim=dim, name=name
    )


def _contrib_flipped_sparse_softmax_xent(logits, labels, name=None):
    """tf.contrib.nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits of
    TensorFlow 1.x, written into this file by `compat-input migrate`:
    tf.nn.sparse_softmax_cross_entropy_with_logits with `logits` first."""
    import tensorflow

    return tensorflow.compat.v1.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name=name
    )


def _contrib_flipped_sigmoid_xent(logits, targets, name=None):
    """tf.contrib.nn.deprecated_flipped_sigmoid_cross_entropy_with_logits of TensorFlow 1.x,
    written into this file by `compat-input migrate`:
    tf.nn.sigmoid_cross_entropy_with_logits with `logits` first, `targets` for `labels`."""
    import tensorflow

    return tensorflow.compat.v1.nn.sigmoid_cross_entropy_with_logits(
        labels=targets, logits=logits, name=name
    )


def _contrib_legacy_sequence_loss_by_example(
    logits, targets, weights, average_across_timesteps=True, softmax_loss_function=None, name=None
):
    """tf.contrib.legacy_seq2seq.sequence_loss_by_example of TensorFlow 1.x, written into
    this file by `compat-input migrate` (tf.contrib is gone in TensorFlow 2): for lists of
    steps (`logits` [batch, classes], `targets` and `weights` [batch] each), each example's
    weighted cross-entropy summed over the steps, divided by its summed weights where
    `average_across_timesteps`."""
    import tensorflow

    tf = tensorflow.compat.v1
    if not len(logits) == len(targets) == len(weights):
        raise ValueError(
            "Lengths of logits, weights, and targets must be the same "
            f"{len(logits)}, {len(weights)}, {len(targets)}."
        )
    with tf.name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        losses = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=tf.reshape(target, [-1]), logits=logit
                )
            else:
                loss = softmax_loss_function(labels=target, logits=logit)
            losses.append(loss * weight)
        total = tf.add_n(losses)
        if average_across_timesteps:
            total /= tf.add_n(weights) + 1e-12  # All-zero weights divide by almost nothing.
        return total


def _contrib_legacy_sequence_loss(
    logits,
    targets,
    weights,
    average_across_timesteps=True,
    average_across_batch=True,
    softmax_loss_function=None,
    name=None,
):
    """tf.contrib.legacy_seq2seq.sequence_loss of TensorFlow 1.x, written into this file by
    `compat-input migrate`: `_contrib_legacy_sequence_loss_by_example` summed over the
    batch, divided by the batch size where `average_across_batch`."""
    import tensorflow

    tf = tensorflow.compat.v1
    with tf.name_scope(name, "sequence_loss", logits + targets + weights):
        cost = tf.reduce_sum(
            _contrib_legacy_sequence_loss_by_example(
                logits, targets, weights, average_across_timesteps, softmax_loss_function
            )
        )
        if average_across_batch:
            return cost / tf.cast(tf.shape(targets[0])[0], cost.dtype)
        return cost


# Helpers a helper calls: the codemod writes them into the file with it.
CALLS = {_contrib_legacy_sequence_loss: (_contrib_legacy_sequence_loss_by_example,)}

# Qualified tf.contrib name -> the function above that replaces it.
_FLIPPED = "tensorflow.contrib.nn.deprecated_flipped_{}_cross_entropy_with_logits"
HELPERS = {
    "tensorflow.contrib.seq2seq.sequence_loss": _contrib_sequence_loss,
    # The research/inception trainer's loss (its slim/losses.py) and TF 0.12-era code
    # ported with contrib's argument-order shims.
    _FLIPPED.format("softmax"): _contrib_flipped_softmax_xent,
    _FLIPPED.format("sparse_softmax"): _contrib_flipped_sparse_softmax_xent,
    _FLIPPED.format("sigmoid"): _contrib_flipped_sigmoid_xent,
    # The PTB tutorial of TensorFlow 1.0-1.2 and the models of its time.
    "tensorflow.contrib.legacy_seq2seq.sequence_loss": _contrib_legacy_sequence_loss,
    "tensorflow.contrib.legacy_seq2seq.sequence_loss_by_example": (
        _contrib_legacy_sequence_loss_by_example
    ),
}
