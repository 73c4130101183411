"""The options `install()` gives each session: TensorFlow's TFG round trip left out.

A session optimizes each new set of fetches it runs with Grappler, whose last pass (TFG)
converts the whole graph, every function of its library included, to MLIR and back. With
TF1 behaviour's control flow that round trip changes no value and runs no op less (it sinks
ops into functional conds, which v1 control flow does not make: its conds are Switch and
Merge ops; and it drops functions nothing calls), and it costs in proportion to the
library, which a pipeline's tf.data functions fill: a new set of fetches on the
youtube-8m-shaped trainer's graph took 14-17 ms, 8 ms without TFG (legacy's graph, with no
library: 3-4 ms), and a Supervisor program runs ten such sets as it starts. In TF2
behaviour, where model conds are functional and the pass may sink their ops, sessions keep
TensorFlow's options.
"""

import tensorflow as tf

tf1 = tf.compat.v1


def without_tfg_round_trip(init):
    """`BaseSession.__init__` that, in TF1 behaviour, turns the TFG pass off in the options
    the session is made with (a copy: the program's config is left as it was)."""

    def init_without_tfg_round_trip(self, target="", graph=None, config=None):
        if not tf1.control_flow_v2_enabled() and (
            config is None or isinstance(config, tf1.ConfigProto)
        ):
            options = tf1.ConfigProto()
            if config is not None:
                options.CopyFrom(config)
            options.graph_options.rewrite_options.disable_tfg_optimizer = True
            config = options
        init(self, target, graph, config)

    return init_without_tfg_round_trip
