"""A TF1 sequence trainer that batches by length with tf.contrib.training, as seq2seq and
speech trainers did: text lines of token ids, bucket_by_sequence_length with dynamic
padding, an embedding averaged over each sequence's real tokens, a classifier of the
first token's parity. Seeded, one reader thread: it prints the same numbers every run.

    python bucketing_trainer.py FILE...
"""

import sys

import tensorflow as tf

tf.set_random_seed(11)
files = tf.train.string_input_producer(sys.argv[1:], num_epochs=2, shuffle=False)
_, line = tf.TextLineReader().read(files)
ids = tf.string_to_number(tf.string_split([line]).values, tf.int32)
label = ids[0] % 2
lengths, (tokens, labels) = tf.contrib.training.bucket_by_sequence_length(
    tf.size(ids), [ids, label], batch_size=4, bucket_boundaries=[3, 6], dynamic_pad=True
)
embedding = tf.get_variable("embedding", [100, 8])
mask = tf.sequence_mask(lengths, tf.shape(tokens)[1], dtype=tf.float32)
summed = tf.reduce_sum(tf.nn.embedding_lookup(embedding, tokens) * mask[:, :, None], 1)
mean = summed / tf.cast(lengths, tf.float32)[:, None]
weights = tf.get_variable("weights", [8, 2])
logits = tf.matmul(mean, weights)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            _, value, n = sess.run([train, loss, lengths])
            print(n.tolist(), f"{value:.6f}")
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
