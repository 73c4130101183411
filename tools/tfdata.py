"""`compat-input migrate --to-tfdata`: the input pipelines it recognizes, as plain tf.data.

A pipeline is recognized in one block of statements (a module or a function body):

    q = tf.train.string_input_producer(files, num_epochs=E, shuffle=S, seed=...)
    r = tf.TextLineReader(skip_header_lines=K)      # or TFRecordReader(), or inline
    _, value = r.read(q)                            # the key unused
    ...statements computing the example from value...
    a, b = tf.train.batch([x, y], batch_size=B, allow_smaller_final_batch=...)
                                                    # or shuffle_batch(..., capacity, min_after_dequeue)

and becomes a function of the example (the statements, moved whole), a tf.data chain
(file names, shuffled each epoch where legacy shuffled them, repeated `num_epochs` times,
read, mapped, shuffled and batched) and a one-shot iterator's `get_next()` in place of the
batch. Queue runners and coordinators around it start nothing afterwards: harmless. What
tf.data cannot keep is said in a comment above the chain and in the report (CI014): the
shuffle order (a shuffle buffer, not a RandomShuffleQueue), several reader threads. A
pipeline that differs from the pattern stays on compat_input, reported with the reason
(CI015). The code is parsed, never executed.
"""

import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider
from libcst.metadata import QualifiedNameSource

from . import rules

_PRODUCER = "string_input_producer"
# Producers --to-tfdata leaves on compat_input for now, and why.
_NOT_YET = {
    "slice_input_producer": "slice_input_producer is not converted yet: a one-shot iterator "
    "cannot capture the variables preloaded programs slice",
    "input_producer": "input_producer is not converted yet",
}
_READERS = {"TextLineReader": "TextLineDataset", "TFRecordReader": "TFRecordDataset"}
_BATCHERS = ("batch", "shuffle_batch")


@dataclasses.dataclass
class Converted:
    line: int
    flag: rules.Flag


def _qualified(command, node) -> str:
    """The served name (`batch`, `TextLineReader`) `node` names, or ""."""
    names = command.get_metadata(QualifiedNameProvider, node, set())
    for name in (q.name for q in names if q.source == QualifiedNameSource.IMPORT):
        name = rules.as_tf1(name)
        if name in rules.RENAMES:
            return rules.RENAMES[name]
    return ""


def _tf_root(node) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else "tf"


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _call_of(statement):
    """(targets, call) of `targets = call(...)`, or (None, None)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        if isinstance(small.value, cst.Call):
            return small.targets[0].target, small.value
    return None, None


def _arguments(call: cst.Call, names: tuple) -> dict:
    """Positional and keyword arguments of `call` by parameter name, as code."""
    out = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            raise _NotThisPattern("*args")
        key = arg.keyword.value if arg.keyword else names[index]
        out[key] = _code(arg.value)
    return out


def _names_in(nodes) -> set:
    found = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            found.add(node.value)

    for node in nodes:
        node.visit(Names())
    return found


def _repeat(made: dict) -> str:
    """`.repeat(...)` for a producer's `num_epochs` (None: for ever)."""
    epochs = made.get("num_epochs", "None")
    return f".repeat({'' if epochs == 'None' else epochs})"


class _NotThisPattern(Exception):
    pass


_RANGE_ARGS = ("limit", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name")
_PRODUCER_ARGS = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name")
_BATCH_ARGS = (
    "tensors",
    "batch_size",
    "num_threads",
    "capacity",
    "enqueue_many",
    "shapes",
    "dynamic_pad",
    "allow_smaller_final_batch",
    "shared_name",
    "name",
)
_SHUFFLE_ARGS = (
    "tensors",
    "batch_size",
    "capacity",
    "min_after_dequeue",
    "num_threads",
    "seed",
    "enqueue_many",
    "shapes",
    "allow_smaller_final_batch",
    "shared_name",
    "name",
)

CONVERTED = "CI014"
KEPT = "CI015"


class ToTfData(cst.CSTTransformer):
    """Rewrites the pipelines of the pattern above; `findings` says what it did and left."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self):
        super().__init__()
        self.findings: list = []
        self._count = 0

    def leave_Call(self, original_node, updated_node):
        # range_input_producer(limit, ...).dequeue(): one index a run (the PTB producer).
        func = original_node.func
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "dequeue"
            and not original_node.args
            and isinstance(func.value, cst.Call)
            and _qualified(self, func.value.func) == "range_input_producer"
        ):
            return updated_node
        producer = func.value
        try:
            made = _arguments(producer, _RANGE_ARGS)
        except _NotThisPattern:
            return updated_node
        if "shared_name" in made:
            return updated_node
        tf = _tf_root(producer.func)
        # A tensor limit (PTB's epoch_size) is int32; tf.data counts in int64.
        limit = f"{tf}.cast({made['limit']}, {tf}.int64)"
        chain = f"{tf}.data.Dataset.range({limit})"
        shuffled = made.get("shuffle", "True") != "False"
        if shuffled:
            chain += f".shuffle({limit}, seed={made.get('seed', 'None')})"
        chain += _repeat(made)
        chain += f".map(lambda i: {tf}.cast(i, {tf}.int32))"
        differences = (
            "the shuffle order is tf.data's, not legacy's (each epoch holds the same indices)"
            if shuffled
            else "the same indices"
        )
        self._report(
            original_node,
            CONVERTED,
            "note",
            f"range_input_producer(...).dequeue() converted to tf.data: {differences}",
        )
        return cst.parse_expression(
            f"{tf}.compat.v1.data.make_one_shot_iterator({chain}).get_next()"
        )

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self._block(original_node.body, updated_node.body))

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self._block(original_node.body, updated_node.body))

    def _block(self, original: list, updated: list) -> list:
        # `original` for the metadata (names, lines), `updated` for what inner blocks became.
        body, index = [], 0
        while index < len(original):
            _, call = _call_of(original[index])
            served = _qualified(self, call.func) if call is not None else ""
            if served in _NOT_YET:
                self._keep(original[index], _NOT_YET[served])
            if served == _PRODUCER:
                try:
                    replaced, index = self._convert(original, index)
                    body.extend(replaced)
                    continue
                except _NotThisPattern as why:
                    self._keep(original[index], str(why))
            body.append(updated[index])
            index += 1
        return body

    def _report(self, node, code: str, severity: str, message: str) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        self.findings.append(Converted(line, rules.Flag(code, severity, message, "to-tfdata")))

    def _keep(self, statement, why: str) -> None:
        self._report(
            statement,
            KEPT,
            "warning",
            f"this input pipeline stays on compat_input ({why}): --to-tfdata converts "
            "string_input_producer + one reader's read + per-example statements + batch / "
            "shuffle_batch in one block, and range_input_producer(...).dequeue()",
        )

    def _convert(self, block: list, start: int) -> tuple:
        queue_target, producer = _call_of(block[start])
        if not isinstance(queue_target, cst.Name):
            raise _NotThisPattern("its filename queue is not assigned to a name")
        queue = queue_target.value
        root = _tf_root(producer.func)
        made = _arguments(producer, _PRODUCER_ARGS)
        if "shared_name" in made:
            raise _NotThisPattern("shared_name: share it through the tf.data service instead")
        index = start + 1
        reader_kind, reader_args, reader_name = None, {}, None
        target, call = _call_of(block[index]) if index < len(block) else (None, None)
        if call is not None and _qualified(self, call.func) in _READERS:
            if not isinstance(target, cst.Name):
                raise _NotThisPattern("its reader is not assigned to a name")
            reader_kind = _qualified(self, call.func)
            reader_args = _arguments(call, ("skip_header_lines", "name"))
            reader_name = target.value
            index += 1
        read_target, read = _call_of(block[index]) if index < len(block) else (None, None)
        if read is None or not (
            isinstance(read.func, cst.Attribute) and read.func.attr.value == "read"
        ):
            raise _NotThisPattern("no reader's read(queue) follows the producer")
        owner = read.func.value
        if reader_name is None:
            if not isinstance(owner, cst.Call) or _qualified(self, owner.func) not in _READERS:
                raise _NotThisPattern("its reader is not a TextLineReader or TFRecordReader")
            reader_kind = _qualified(self, owner.func)
            reader_args = _arguments(owner, ("skip_header_lines", "name"))
        elif not (isinstance(owner, cst.Name) and owner.value == reader_name):
            raise _NotThisPattern("the read is not the reader's")
        if "options" in reader_args or (
            reader_kind == "TFRecordReader" and reader_args.keys() - {"name"}
        ):
            raise _NotThisPattern("the reader has options")
        if len(read.args) != 1 or _code(read.args[0].value) != queue:
            raise _NotThisPattern("the read is not of the producer's queue")
        if not (isinstance(read_target, cst.Tuple) and len(read_target.elements) == 2):
            raise _NotThisPattern("the read is not unpacked as key, value")
        key, value = (_code(e.value) for e in read_target.elements)
        index += 1
        example = []
        while index < len(block):
            target, call = _call_of(block[index])
            if call is not None and _qualified(self, call.func) in _BATCHERS:
                break
            if not isinstance(block[index], cst.SimpleStatementLine):
                raise _NotThisPattern("a compound statement before the batcher")
            example.append(block[index])
            index += 1
        else:
            raise _NotThisPattern("no batch or shuffle_batch follows in the same block")
        batcher = _qualified(self, call.func)
        args = _arguments(call, _SHUFFLE_ARGS if batcher == "shuffle_batch" else _BATCH_ARGS)
        for unsupported in ("enqueue_many", "shapes", "dynamic_pad", "shared_name"):
            if args.get(unsupported, "False") not in ("False", "None"):
                raise _NotThisPattern(f"the batcher's {unsupported}")
        tensors = cst.parse_expression(args["tensors"])
        if not isinstance(tensors, (cst.List, cst.Tuple)):
            raise _NotThisPattern("the batcher's tensors are not a list")
        after = _names_in(block[index + 1 :])
        if key != "_" and key in after | _names_in(example) | _names_in([tensors]):
            raise _NotThisPattern(f"the reader's key {key} is used")
        if queue in after or (reader_name and reader_name in after):
            raise _NotThisPattern("the queue or the reader is used again after the batcher")
        replaced = self._emit(
            root,
            made,
            reader_kind,
            reader_args,
            value,
            example,
            tensors,
            batcher,
            args,
            target,
        )
        self._report(
            block[start],
            CONVERTED,
            "note",
            f"string_input_producer + {reader_kind} + {batcher} converted to tf.data: "
            + self._differences(made, args, batcher),
        )
        return replaced, index + 1

    @staticmethod
    def _differences(made: dict, args: dict, batcher: str) -> str:
        said = []
        if made.get("shuffle", "True") != "False" or batcher == "shuffle_batch":
            said.append(
                "the shuffle order is tf.data's, not legacy's (each epoch holds the same examples)"
            )
        if args.get("num_threads", "1") not in ("1",):
            said.append("one reading thread, in order (legacy's several threads interleaved)")
        return "; ".join(said) or "the same batches"

    def _emit(
        self,
        tf,
        made,
        reader_kind,
        reader_args,
        value,
        example,
        tensors,
        batcher,
        args,
        target,
    ):
        self._count += 1
        n = self._count
        files = made["string_tensor"]
        shuffle = made.get("shuffle", "True")
        seed = made.get("seed", "None")
        names = [_code(e.value) for e in tensors.elements]
        returned = names[0] if len(names) == 1 else "(" + ", ".join(names) + ",)"
        dataset = f"_dataset_{n}"
        skip = reader_args.get("skip_header_lines")
        read = f"{tf}.data.{_READERS[reader_kind]}(f)" + (
            f".skip({skip})" if skip not in (None, "None", "0") else ""
        )
        lines = [
            f"def _example_{n}({value}):",
            *("    " + cst.Module(body=[s]).code.rstrip("\n") for s in example),
            f"    return {returned}",
            "",
            "",
            f"{dataset} = {tf}.data.Dataset.from_tensor_slices({files})",
        ]
        if shuffle != "False":
            lines.append(
                f"{dataset} = {dataset}.shuffle({tf}.size({files}, out_type={tf}.int64), seed={seed})"
            )
        lines.append(f"{dataset} = {dataset}{_repeat(made)}")
        lines.append(f"{dataset} = {dataset}.flat_map(lambda f: {read})")
        lines.append(f"{dataset} = {dataset}.map(_example_{n})")
        if batcher == "shuffle_batch":
            lines.append(
                f"{dataset} = {dataset}.shuffle({args['capacity']}, seed={args.get('seed', 'None')})"
            )
        smaller = args.get("allow_smaller_final_batch", "False")
        drop = {"True": "False", "False": "True"}.get(smaller, f"not ({smaller})")
        lines.append(f"{dataset} = {dataset}.batch({args['batch_size']}, drop_remainder={drop})")
        lines.append(
            f"{_code(target)} = {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()"
        )
        module = cst.parse_module("\n".join(lines) + "\n")
        comment = cst.EmptyLine(
            comment=cst.Comment(
                f"# compat-input migrate --to-tfdata: the {batcher} input as tf.data "
                "(migration_guide.md#to-tfdata)"
            )
        )
        first = module.body[0].with_changes(leading_lines=[comment])
        return [first, *module.body[1:]]


def convert(module: cst.Module) -> tuple:
    """`module` with its recognized pipelines as tf.data, and the findings."""
    wrapper = cst.MetadataWrapper(module)
    converter = ToTfData()
    return wrapper.visit(converter), converter.findings
