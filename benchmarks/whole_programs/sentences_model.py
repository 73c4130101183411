"""The sentence model for the skip_thoughts-shaped programs (the input is what is measured;
a model keeps the program whole): shared by the program and its tf.data twin.

Records as skip_thoughts' are: three sentences of word ids, each a variable-length list."""
import tensorflow as tf

VOCABULARY, WIDTH = 200, 32
NAMES = ("encode", "decode_pre", "decode_post")


def parse(serialized):
    """A batch of serialized examples -> per sentence, (ids, mask), padded with zeros."""
    features = tf.parse_example(
        serialized, features={name: tf.VarLenFeature(tf.int64) for name in NAMES})
    sentences = []
    for name in NAMES:
        sparse = features[name]
        mask = tf.sparse_to_dense(sparse.indices, sparse.dense_shape,
                                  tf.ones_like(sparse.values, dtype=tf.int32))
        sentences.append((tf.sparse_tensor_to_dense(sparse), mask))
    return sentences


def train_op(sentences):
    """Each sentence's mean word embedding predicts the others' words, trained with Adam."""
    global_step = tf.train.get_or_create_global_step()
    embedding = tf.get_variable("embedding", [VOCABULARY, WIDTH])
    logits_weights = tf.get_variable("logits", [WIDTH, VOCABULARY])
    means = []
    for ids, mask in sentences:
        weights = tf.cast(mask, tf.float32)[:, :, None]
        total = tf.reduce_sum(tf.nn.embedding_lookup(embedding, ids) * weights, 1)
        means.append(total / tf.maximum(tf.reduce_sum(weights, 1), 1.0))
    loss = 0.0
    for (ids, mask), mean in zip(sentences[1:], means[:1] * 2):
        logits = tf.matmul(mean, logits_weights)
        targets = tf.one_hot(ids, VOCABULARY) * tf.cast(mask, tf.float32)[:, :, None]
        loss += tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.reduce_sum(targets, 1), logits=logits))
    tf.summary.scalar("loss", loss)
    return [tf.train.AdamOptimizer(0.001).minimize(loss, global_step=global_step), loss]
