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


def _contrib_legacy_rnn_decoder(
    decoder_inputs, initial_state, cell, loop_function=None, scope=None
):
    """tf.contrib.legacy_seq2seq.rnn_decoder of TensorFlow 1.x, written into this file by
    `compat-input migrate`: `cell` run over the list `decoder_inputs` from
    `initial_state`, its variables made at the first step and reused after; with
    `loop_function(previous output, i)`, its result is step i's input from the second step
    on. Returns (the outputs, the last state)."""
    import tensorflow

    tf = tensorflow.compat.v1
    with tf.variable_scope(scope or "rnn_decoder"):
        state, outputs, previous = initial_state, [], None
        for i, step_input in enumerate(decoder_inputs):
            if loop_function is not None and previous is not None:
                with tf.variable_scope("loop_function", reuse=True):
                    step_input = loop_function(previous, i)
            if i > 0:
                tf.get_variable_scope().reuse_variables()
            output, state = cell(step_input, state)
            outputs.append(output)
            if loop_function is not None:
                previous = output
    return outputs, state


def _contrib_legacy_linear(args, output_size):
    """The linear map legacy_seq2seq's attention decoder made with TensorFlow 1.x's
    `core_rnn_cell._Linear`: `args` ([batch, n] tensors) side by side times `kernel`, plus
    `bias` (zeros at first), both made in the current variable scope."""
    import tensorflow

    tf = tensorflow.compat.v1
    args = list(args) if isinstance(args, (list, tuple)) else [args]
    total = 0
    for arg in args:
        size = tf.compat.dimension_value(arg.get_shape().with_rank(2)[1])
        if size is None:
            raise ValueError(f"linear: {arg.name} has no known size on its second axis")
        total += size
    dtype = args[0].dtype
    with tf.variable_scope(tf.get_variable_scope()) as outer:
        kernel = tf.get_variable("kernel", [total, output_size], dtype=dtype)
        with tf.variable_scope(outer) as inner:
            inner.set_partitioner(None)
            bias = tf.get_variable(
                "bias", [output_size], dtype=dtype, initializer=tf.constant_initializer(0.0)
            )
    joined = args[0] if len(args) == 1 else tf.concat(args, 1)
    return tf.nn.bias_add(tf.matmul(joined, kernel), bias)


def _contrib_legacy_attention_decoder(
    decoder_inputs,
    initial_state,
    attention_states,
    cell,
    output_size=None,
    num_heads=1,
    loop_function=None,
    dtype=None,
    scope=None,
    initial_state_attention=False,
):
    """tf.contrib.legacy_seq2seq.attention_decoder of TensorFlow 1.x, written into this
    file by `compat-input migrate`: `rnn_decoder` whose every step also reads
    `attention_states` [batch, length, size] through `num_heads` additive attentions
    (Bahdanau's), fed back with the next input and projected with the cell's output to
    `output_size`. The same variables by name (AttnW_k, AttnV_k, Attention_k/kernel, ...),
    so that TensorFlow 1 checkpoints restore. Returns (the outputs, the last state)."""
    import tensorflow

    tf = tensorflow.compat.v1
    if not decoder_inputs:
        raise ValueError("Must provide at least 1 input to attention decoder.")
    if num_heads < 1:
        raise ValueError("With less than 1 heads, use a non-attention decoder.")
    attn_size = tf.compat.dimension_value(attention_states.get_shape()[2])
    if attn_size is None:
        raise ValueError(f"Shape[2] of attention_states must be known: {attention_states.shape}")
    if output_size is None:
        output_size = cell.output_size
    with tf.variable_scope(scope or "attention_decoder", dtype=dtype) as outer:
        dtype = outer.dtype
        length = tf.compat.dimension_value(attention_states.get_shape()[1])
        if length is None:
            length = tf.shape(attention_states)[1]
        # The states as a [batch, length, 1, size] image: a 1x1 convolution projects all.
        hidden = tf.reshape(attention_states, [-1, length, 1, attn_size])
        features, vectors = [], []
        for head in range(num_heads):
            weights = tf.get_variable(f"AttnW_{head}", [1, 1, attn_size, attn_size], dtype=dtype)
            features.append(tf.nn.conv2d(hidden, weights, [1, 1, 1, 1], "SAME"))
            vectors.append(tf.get_variable(f"AttnV_{head}", [attn_size], dtype=dtype))

        def attention(query):
            if tensorflow.nest.is_nested(query):  # An LSTM's (c, h): side by side.
                query = tf.concat(tensorflow.nest.flatten(query), 1)
            reads = []
            for head in range(num_heads):
                with tf.variable_scope(f"Attention_{head}"):
                    y = _contrib_legacy_linear(query, attn_size)
                    y = tf.cast(tf.reshape(y, [-1, 1, 1, attn_size]), dtype)
                    scores = tf.reduce_sum(vectors[head] * tf.tanh(features[head] + y), [2, 3])
                    weights = tf.cast(tf.nn.softmax(tf.cast(scores, tf.float32)), dtype)
                    read = tf.reduce_sum(tf.reshape(weights, [-1, length, 1, 1]) * hidden, [1, 2])
                    reads.append(tf.reshape(read, [-1, attn_size]))
            return reads

        state, outputs, previous = initial_state, [], None
        batch = tf.shape(decoder_inputs[0])[0]
        reads = [tf.zeros(tf.stack([batch, attn_size]), dtype=dtype) for _ in range(num_heads)]
        for read in reads:
            read.set_shape([None, attn_size])
        if initial_state_attention:
            reads = attention(initial_state)
        for i, step_input in enumerate(decoder_inputs):
            if i > 0:
                tf.get_variable_scope().reuse_variables()
            if loop_function is not None and previous is not None:
                with tf.variable_scope("loop_function", reuse=True):
                    step_input = loop_function(previous, i)
            input_size = tf.compat.dimension_value(step_input.get_shape().with_rank(2)[1])
            if input_size is None:
                raise ValueError(f"Could not infer input size from input: {step_input.name}")
            x = _contrib_legacy_linear(
                [tf.cast(t, dtype) for t in [step_input, *reads]], input_size
            )
            cell_output, state = cell(x, state)
            if i == 0 and initial_state_attention:
                with tf.variable_scope(tf.get_variable_scope(), reuse=True):
                    reads = attention(state)
            else:
                reads = attention(state)
            with tf.variable_scope("AttnOutputProjection"):
                output = _contrib_legacy_linear([tf.cast(cell_output, dtype), *reads], output_size)
            if loop_function is not None:
                previous = output
            outputs.append(output)
    return outputs, state


# Helpers a helper calls: the codemod writes them into the file with it.
CALLS = {
    _contrib_legacy_sequence_loss: (_contrib_legacy_sequence_loss_by_example,),
    _contrib_legacy_attention_decoder: (_contrib_legacy_linear,),
}

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
    # research/attention_ocr's decoders, and the seq2seq models of their time.
    "tensorflow.contrib.legacy_seq2seq.rnn_decoder": _contrib_legacy_rnn_decoder,
    "tensorflow.contrib.legacy_seq2seq.attention_decoder": _contrib_legacy_attention_decoder,
}
