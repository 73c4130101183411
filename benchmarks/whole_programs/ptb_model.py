"""The PTB tutorial's language model (ptb_word_lm.PTBModel: embedding, stacked LSTMs
unrolled over num_steps, softmax, SGD with clipped gradients), its LSTM written out with
tf.get_variable as course programs wrote it; shared by the program and its tf.data twin."""
import numpy as np
import tensorflow as tf

CONFIGS = {  # ptb_word_lm's SmallConfig and TestConfig.
    "small": dict(layers=2, steps=20, hidden=200, batch=20, vocab=10000, grad=5.0),
    "test": dict(layers=1, steps=2, hidden=2, batch=20, vocab=10000, grad=1.0),
}


def words(data_dir):
    return np.load(f"{data_dir}/ptb_ids.npy")


def train_op(x, y, c):
    init = tf.random_uniform_initializer(-0.1, 0.1)
    with tf.variable_scope("model", initializer=init):
        embedding = tf.get_variable("embedding", [c["vocab"], c["hidden"]])
        inputs = tf.nn.embedding_lookup(embedding, x)
        states = [
            (tf.zeros([c["batch"], c["hidden"]]), tf.zeros([c["batch"], c["hidden"]]))
            for _ in range(c["layers"])
        ]
        kernels = [
            tf.get_variable(f"lstm_{k}", [2 * c["hidden"], 4 * c["hidden"]])
            for k in range(c["layers"])
        ]
        outputs = []
        for t in range(c["steps"]):
            h = inputs[:, t, :]
            for k in range(c["layers"]):
                cell, hidden = states[k]
                gates = tf.matmul(tf.concat([h, hidden], 1), kernels[k])
                i, j, f, o = tf.split(gates, 4, axis=1)
                cell = cell * tf.sigmoid(f + 1.0) + tf.sigmoid(i) * tf.tanh(j)
                h = tf.tanh(cell) * tf.sigmoid(o)
                states[k] = (cell, h)
            outputs.append(h)
        output = tf.reshape(tf.stack(outputs, axis=1), [-1, c["hidden"]])
        softmax_w = tf.get_variable("softmax_w", [c["hidden"], c["vocab"]])
        softmax_b = tf.get_variable("softmax_b", [c["vocab"]])
        logits = tf.matmul(output, softmax_w) + softmax_b
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.reshape(y, [-1]), logits=logits)) / c["batch"]
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tf.trainable_variables()), c["grad"])
    optimizer = tf.train.GradientDescentOptimizer(1.0)
    return [optimizer.apply_gradients(zip(grads, tf.trainable_variables())), loss]
