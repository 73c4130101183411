"""Ops made straight into the graph: `graph_ops.X(**kwargs)` is `tf.raw_ops.X(**kwargs)`.

`tf.raw_ops` goes through TensorFlow's generic op builder, which converts every input and
infers and serializes every attr anew for each op: 110-150 µs for a dataset or variable
op in a graph of 3,000, where making the same node from its serialized attrs costs 45-55.
A tower of input makes some 50 ops, most of them ours, and the same attrs again and again
(the element types and shapes of its datasets), so attrs are serialized once per value
here. Only what the generic builder would infer from the inputs is inferred (list lengths,
input types); TensorFlow fills in the defaults, so the node is the same
(tests/test_graph_ops.py builds towers both ways and compares them node for node).

Whatever is not handled here goes to `tf.raw_ops` unchanged: eager execution, an input that
is not a tensor yet, an attr of a kind not listed below, an op TensorFlow does not know.
"""

import functools
from typing import Any

import tensorflow as tf

from compat_input._src.core import tf_internals

_AttrValue = tf.compat.v1.AttrValue
_NameAttrList = tf.compat.v1.NameAttrList


class _Unhandled(Exception):
    """Built by `tf.raw_ops` instead."""


# Per scalar attr kind: the AttrValue field that holds it, and how a value becomes it.
_FIELDS = {
    "type": ("type", lambda v: tf.as_dtype(v).as_datatype_enum),
    "shape": ("shape", lambda v: tf.TensorShape(v).as_proto()),
    "int": ("i", int),
    "float": ("f", float),
    "bool": ("b", bool),
    "string": ("s", tf.compat.as_bytes),
}


def _attr_value(kind: str, value) -> Any:
    if kind == "func":
        if isinstance(value, _NameAttrList):
            return _AttrValue(func=value)
        raise _Unhandled(kind)
    listed = kind.startswith("list(") and kind.endswith(")")
    field, convert = _FIELDS.get(kind[5:-1] if listed else kind, (None, None))
    if field is None:
        raise _Unhandled(kind)
    if listed:
        return _AttrValue(list=_AttrValue.ListValue(**{field: [convert(v) for v in value]}))
    return _AttrValue(**{field: convert(value)})


def _frozen(value) -> Any:
    """A hashable stand-in for an attr's value, equal exactly where the values are."""
    if isinstance(value, tf.DType):
        return ("dtype", value.as_datatype_enum)
    if isinstance(value, tf.TensorShape):
        return ("shape", None if value.rank is None else tuple(value.as_list()))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_frozen(v) for v in value))
    if isinstance(value, _NameAttrList):
        return ("func", value.SerializeToString(deterministic=True))
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return (type(value).__name__, value)
    raise _Unhandled(type(value).__name__)


# Serialized attrs kept per op type: a graph's pipelines share a few dozen values.
_KEPT = 512


class _OpKind:
    """What the builder needs of one op type's definition, looked up once."""

    def __init__(self, op_type: str):
        definition = tf_internals.op_def(op_type)
        if definition is None:
            raise _Unhandled(op_type)
        self.type = op_type
        self.definition = definition
        self.inputs = list(definition.input_arg)
        self.outputs = list(definition.output_arg)
        self.attr_kinds = {a.name: a.type for a in definition.attr}
        self.input_names = {a.name for a in self.inputs}
        # Serialized attrs by their frozen values.
        self.attrs: dict = {}

    def make(self, kwargs: dict):
        name = kwargs.pop("name", None) or self.type
        inputs: list = []
        inferred: dict = {}
        for arg in self.inputs:
            value = kwargs[arg.name]
            listed = bool(arg.number_attr or arg.type_list_attr)
            values = list(value) if listed else [value]
            if not all(isinstance(v, tf.Tensor) for v in values):
                raise _Unhandled(arg.name)
            if arg.type_attr and not values:  # No input to take the type from.
                raise _Unhandled(arg.name)
            if arg.number_attr:
                inferred[arg.number_attr] = len(values)
            if arg.type_attr:
                inferred[arg.type_attr] = values[0].dtype
            if arg.type_list_attr:
                inferred[arg.type_list_attr] = [v.dtype for v in values]
            inputs += values
        graph = tf.compat.v1.get_default_graph()
        if any(t.graph is not graph for t in inputs):
            # Captured into a function: raw_ops names the capture after the op's own scope.
            raise _Unhandled("capture")
        given = {k: v for k, v in kwargs.items() if k not in self.input_names}
        given.update(inferred)
        key = tuple(sorted((k, _frozen(v)) for k, v in given.items()))
        attrs = self.attrs.get(key)
        if attrs is None:
            if any(k not in self.attr_kinds for k in given):
                raise _Unhandled("attr")
            # TensorFlow fills in the defaults as it makes the node.
            attrs = {k: _attr_value(self.attr_kinds[k], v) for k, v in given.items()}
            if len(self.attrs) >= _KEPT:  # Functions are named anew in every graph.
                self.attrs.clear()
            self.attrs[key] = attrs
        op = tf_internals.create_op(graph, self.type, inputs, attrs, name, self.definition)
        return self._outputs(op, attrs)

    def _outputs(self, op: tf.Operation, attrs: dict):
        # As `tf.raw_ops` returns them: the op, a tensor, a list, or one of those per output.
        if not self.outputs:
            return op
        parts, start = [], 0
        for arg in self.outputs:
            if arg.number_attr:
                count = attrs[arg.number_attr].i
            elif arg.type_list_attr:
                count = len(attrs[arg.type_list_attr].list.type)
            else:
                parts.append(op.outputs[start])
                start += 1
                continue
            parts.append(list(op.outputs[start : start + count]))
            start += count
        return parts[0] if len(parts) == 1 else tuple(parts)


@functools.cache
def _kind(op_type: str):
    try:
        return _OpKind(op_type)
    except _Unhandled:
        return None


# Off: every op goes to `tf.raw_ops` (the tests compare graphs made both ways).
enabled = True


def _builder(op_type: str):
    fallback = getattr(tf.raw_ops, op_type)

    def build(**kwargs):
        kind = _kind(op_type) if enabled else None
        if kind is None or tf.executing_eagerly():
            return fallback(**kwargs)
        try:
            return kind.make(dict(kwargs))
        except (_Unhandled, KeyError):
            return fallback(**kwargs)

    build.__name__ = op_type
    return build


_builders: dict = {}


def __getattr__(op_type: str):
    if op_type.startswith("__") or not hasattr(tf.raw_ops, op_type):
        raise AttributeError(op_type)
    if op_type not in _builders:
        _builders[op_type] = _builder(op_type)
    return _builders[op_type]
