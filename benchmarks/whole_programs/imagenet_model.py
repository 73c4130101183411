"""A small convolutional classifier for the ImageNet-style programs (the input is what is
measured; a model keeps the program whole): shared by the program and its tf.data twin."""
import tensorflow as tf


def train_op(images, labels, classes=10):
    net = images
    for k, depth in enumerate([16, 32]):
        kernel = tf.get_variable(f"conv{k}", [3, 3, net.shape[-1].value, depth],
                                 initializer=tf.truncated_normal_initializer(stddev=0.05))
        net = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(net, kernel, [1, 2, 2, 1], "SAME")),
                             [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
    net = tf.reduce_mean(net, axis=[1, 2])
    weights = tf.get_variable("logits", [net.shape[-1].value, classes],
                              initializer=tf.truncated_normal_initializer(stddev=0.05))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=tf.matmul(net, weights)))
    return [tf.train.MomentumOptimizer(0.01, 0.9).minimize(loss), loss]


def parse(serialized):
    """inception's parse_example_proto: the JPEG, its label and its boxes."""
    features = tf.parse_single_example(serialized, {
        "image/encoded": tf.FixedLenFeature([], tf.string),
        "image/class/label": tf.FixedLenFeature([], tf.int64),
        "image/object/bbox/xmin": tf.VarLenFeature(tf.float32),
        "image/object/bbox/ymin": tf.VarLenFeature(tf.float32),
        "image/object/bbox/xmax": tf.VarLenFeature(tf.float32),
        "image/object/bbox/ymax": tf.VarLenFeature(tf.float32),
    })
    sides = [tf.expand_dims(features[f"image/object/bbox/{k}"].values, 0)
             for k in ("ymin", "xmin", "ymax", "xmax")]
    bbox = tf.expand_dims(tf.transpose(tf.concat(sides, 0)), 0)
    return features["image/encoded"], tf.cast(features["image/class/label"], tf.int32), bbox


def distort(encoded, bbox, size=96):
    """inception's distort_image: a random box, resized, flipped, brightened."""
    image = tf.image.decode_jpeg(encoded, channels=3)
    begin, box_size, _ = tf.image.sample_distorted_bounding_box(
        tf.shape(image), bounding_boxes=bbox, min_object_covered=0.1,
        aspect_ratio_range=[0.75, 1.33], area_range=[0.05, 1.0], max_attempts=100,
        use_image_if_no_bounding_boxes=True)
    image = tf.slice(image, begin, box_size)
    image = tf.image.resize_images(image, [size, size])
    image.set_shape([size, size, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=32.0 / 255.0)
    return tf.clip_by_value(image / 255.0, 0.0, 1.0)
