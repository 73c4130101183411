"""A TF1 multi-tower trainer in the shape of the CIFAR-10 multi-GPU tutorial: a seeded
batch of images, tf.contrib.slim.prefetch_queue in front of the towers, each tower
dequeuing its own batch and computing gradients on the shared variables, the gradients
averaged and applied once a step. Seeded, one reader thread: the same numbers every run.

    python multi_tower_trainer.py
"""

import tensorflow as tf

TOWERS = 2
tf.set_random_seed(5)
index = tf.train.range_input_producer(48, num_epochs=1, shuffle=False).dequeue()
image = tf.random_uniform([4, 4, 3], seed=1) + tf.cast(index, tf.float32) / 48.0
label = index % 3
images, labels = tf.train.batch([image, label], batch_size=4)
batch_queue = tf.contrib.slim.prefetch_queue.prefetch_queue([images, labels], capacity=2 * TOWERS)
weights = tf.get_variable("weights", [48, 3], initializer=tf.truncated_normal_initializer(seed=2))
optimizer = tf.train.GradientDescentOptimizer(0.1)
tower_grads, tower_losses = [], []
for i in range(TOWERS):
    with tf.device("/cpu:0"), tf.name_scope(f"tower_{i}"):
        image_batch, label_batch = batch_queue.dequeue()
        logits = tf.matmul(tf.reshape(image_batch, [4, 48]), weights)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label_batch, logits=logits)
        )
        tower_losses.append(loss)
        tower_grads.append(optimizer.compute_gradients(loss, [weights]))
# Two towers: the sum and the mean do not depend on which tower took which batch.
average = tf.add_n([g for g, _ in (grads[0] for grads in tower_grads)]) / TOWERS
train = optimizer.apply_gradients([(average, weights)])
total = tf.add_n(tower_losses)
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    try:
        while True:
            _, value = sess.run([train, total])
            print(f"{value:.6f}")
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
