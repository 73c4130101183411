"""The video-level classifier for the youtube-8m-shaped programs (the input is what is
measured; a model keeps the program whole): shared by the program and its tf.data twin.

Records as youtube-8m's aggregated features are: an id, a variable list of labels, and
two fixed vectors of mean features (RGB and audio)."""
import tensorflow as tf

CLASSES = 100
RGB, AUDIO = 1024, 128
FEATURES = {
    "id": tf.FixedLenFeature([], tf.string),
    "labels": tf.VarLenFeature(tf.int64),
    "mean_rgb": tf.FixedLenFeature([RGB], tf.float32),
    "mean_audio": tf.FixedLenFeature([AUDIO], tf.float32),
}


def parse(serialized):
    """A block of serialized examples -> (ids, features, labels as a k-hot, ones)."""
    features = tf.parse_example(serialized, features=FEATURES)
    labels = tf.sparse_to_indicator(features["labels"], CLASSES)
    labels.set_shape([None, CLASSES])
    concatenated = tf.concat([features["mean_rgb"], features["mean_audio"]], 1)
    return features["id"], concatenated, labels, tf.ones([tf.shape(serialized)[0]])


def train_op(features, labels):
    """A logistic classifier over the concatenated features, trained with Adam."""
    global_step = tf.train.get_or_create_global_step()
    weights = tf.get_variable("weights", [RGB + AUDIO, CLASSES],
                              initializer=tf.truncated_normal_initializer(stddev=0.01))
    logits = tf.matmul(tf.nn.l2_normalize(features, 1), weights)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.float32), logits=logits))
    tf.summary.scalar("loss", loss)
    return [tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step), loss]
