"""TensorFlow 1 functions whose `tf.compat.v1` body in TensorFlow 2 only raises.

`tf.compat.v1.logging.flush()` raises NotImplementedError (TensorFlow 2.21's tf_logging.py);
TensorFlow 1's flushed the handlers of its logger. tensorflow/models research programs end
their training with it, after their last checkpoint (video_prediction's prediction_train.py):
on TensorFlow 2 they exited with status 1 after training. `compat-input run` gives them
TensorFlow 1's function, on legacy queues too (`--legacy`), where both ran the same program.
"""

import logging


def flush() -> None:
    """`tf.compat.v1.logging.flush` as TensorFlow 1 had it: flushes each handler of
    TensorFlow's logger."""
    for handler in logging.getLogger("tensorflow").handlers:
        handler.flush()
