"""`compat-input migrate --to-tfdata`: the input pipelines it recognizes, as plain tf.data.

A pipeline is recognized in one block of statements (a module or a function body):

    q = tf.train.string_input_producer(files, num_epochs=E, shuffle=S, seed=...)
    r = tf.TextLineReader(skip_header_lines=K)      # or TFRecordReader(), or inline
    _, value = r.read(q)                            # the key unused
    ...statements computing the example from value...
    a, b = tf.train.batch([x, y], batch_size=B, allow_smaller_final_batch=...)
                                                    # or shuffle_batch(..., capacity, min_after_dequeue)

The reader and its read may also sit in a function of the module that takes the queue
(`image, label = read_and_decode(q)`, TensorFlow's reading-data tutorial), and several
such reads may feed `batch_join` / `shuffle_batch_join`
(`[read(q) for _ in range(n)]`). Preloaded data is the other source:

    image, label = tf.train.slice_input_producer([images, labels], num_epochs=E, shuffle=S)
    ...statements...
    a, b = tf.train.batch([image, label], batch_size=B)

Each becomes a function of the example (the statements that depend on the record, moved
whole; the others stay where they were), a tf.data chain (file names or slice indices,
shuffled each epoch where legacy shuffled them, repeated `num_epochs` times, read, mapped,
shuffled and batched) and an iterator's `get_next()` in place of the batch. File pipelines
get a one-shot iterator. Sliced tensors are often variables the program fills after its
initializers (a one-shot iterator cannot capture those), so a slice pipeline gets an
initializable iterator whose initializer joins the graph collection
`to_tfdata_initializers`, and the program runs that collection where it started its queue
runners, after its own initializers, as legacy's reading started there. Queue runners and
coordinators around them start nothing afterwards: harmless. What tf.data cannot keep is
said in a comment above the chain and in the report (CI014): the shuffle order (a shuffle
buffer, not a RandomShuffleQueue), several reader threads. A pipeline that differs from the
pattern stays on compat_input, reported with the reason (CI015). The code is parsed, never
executed.
"""

import collections
import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider
from libcst.metadata import QualifiedNameSource

from . import rules

# Producers --to-tfdata leaves on compat_input for now, and why.
_NOT_YET = {"input_producer": "input_producer is not converted yet"}
_READERS = {"TextLineReader": "TextLineDataset", "TFRecordReader": "TFRecordDataset"}
_BATCHERS = (
    "batch",
    "shuffle_batch",
    "batch_join",
    "shuffle_batch_join",
    "bucket_by_sequence_length",
)
_BUCKET = "bucket_by_sequence_length"
# contrib.training's other batchers ending a pipeline: why each stays on compat_input.
_NO_TFDATA = {
    "stratified_sample": "stratified_sample: tf.data's rejection_resample mixes the initial "
    "class distribution into its output and draws other random numbers, so its batches "
    "would differ; compat_input keeps legacy's",
    "rejection_sample": "rejection_sample: tf.data has no per-example acceptance sampler "
    "that draws legacy's numbers; compat_input keeps them",
    "bucket": "bucket: not converted yet (tf.data's group_by_window would take its which_bucket)",
    "batch_sequences_with_states": "batch_sequences_with_states: tf.data has no state saver; "
    "compat_input serves one",
}
_JOINS = ("batch_join", "shuffle_batch_join")
# Where a program that sliced preloaded tensors runs its iterators' initializers.
INITIALIZERS = "to_tfdata_initializers"


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
    target, value = _assigned(statement)
    return (target, value) if isinstance(value, cst.Call) else (None, None)


def _assigned(statement):
    """(target, value) of `target = value`, or (None, None)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
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


def _names_counted(node) -> collections.Counter:
    """How many times each name occurs under `node`."""
    counts = collections.Counter()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name):
            counts[name.value] += 1

    node.visit(Names())
    return counts


def _names_in(nodes) -> set:
    return set().union(*(_names_counted(node) for node in nodes))


def _target_names(node) -> set:
    """The names an assignment target binds (not the ones it mutates: `a[0] = ...`)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in node.elements))
    if isinstance(node, cst.StarredElement):
        return _target_names(node.value)
    return set()


def _bound(statement) -> set:
    """The names an assignment statement binds."""
    bound = set()
    for small in getattr(statement, "body", ()):
        if isinstance(small, cst.Assign):
            bound = bound.union(*(_target_names(t.target) for t in small.targets))
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            bound |= _target_names(small.target)
    return bound


def _range_count(node) -> str | None:
    """`n`, as code, when `node` is `range(n)`; else None."""
    if isinstance(node, cst.Call) and _code(node.func) == "range" and len(node.args) == 1:
        return _code(node.args[0].value)
    return None


def _repeat(made: dict) -> str:
    """`.repeat(...)` for a producer's `num_epochs` (None: for ever)."""
    epochs = made.get("num_epochs", "None")
    return f".repeat({'' if epochs == 'None' else epochs})"


def _statement(code: str):
    return cst.parse_statement(code)


class _NotThisPattern(Exception):
    pass


_RANGE_ARGS = ("limit", "num_epochs", "shuffle", "seed", "capacity", "shared_name", "name")
_PRODUCER_ARGS = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name")
_SLICE_ARGS = ("tensor_list", "num_epochs", "shuffle", "seed", "capacity", "shared_name")
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
_BUCKET_ARGS = (
    "input_length",
    "tensors",
    "batch_size",
    "bucket_boundaries",
    "num_threads",
    "capacity",
    "bucket_capacities",
    "shapes",
    "dynamic_pad",
    "allow_smaller_final_batch",
    "keep_input",
    "shared_name",
    "name",
)
_JOIN_ARGS = {
    "batch_join": ("tensors_list", *_BATCH_ARGS[1:2], *_BATCH_ARGS[3:]),
    "shuffle_batch_join": ("tensors_list", *_SHUFFLE_ARGS[1:4], *_SHUFFLE_ARGS[5:]),
}
_ARGS = {"shuffle_batch": _SHUFFLE_ARGS, _BUCKET: _BUCKET_ARGS}

CONVERTED = "CI014"
KEPT = "CI015"


@dataclasses.dataclass
class _Pipeline:
    """One recognized pipeline, as the pieces the tf.data code is written from."""

    root: str  # the module's name for TensorFlow
    source: str  # string_input_producer or slice_input_producer
    made: dict  # the producer's arguments
    params: str = ""  # the example function's parameters
    reader: str = ""  # TextLineReader / TFRecordReader (files)
    reader_args: dict = dataclasses.field(default_factory=dict)
    readers: str = ""  # several readers (a join): how many, as code
    example: list = dataclasses.field(default_factory=list)  # moved into the function
    kept: list = dataclasses.field(default_factory=list)  # independent: stay in place
    returned: str = ""
    batcher: str = ""
    args: dict = dataclasses.field(default_factory=dict)
    target: cst.BaseExpression = None
    reads_in: str = ""  # the function of the module that read, if one did
    batch_comments: tuple = ()  # the batcher's own comments, kept above its batch


class ToTfData(cst.CSTTransformer):
    """Rewrites the pipelines of the pattern above; `findings` says what it did and left."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self):
        super().__init__()
        self.findings: list = []
        self._count = 0
        self._functions: dict = {}
        self._starts = False
        self._sliced = False
        self._uses: collections.Counter = collections.Counter()
        self._inlined: collections.Counter = collections.Counter()

    def visit_Module(self, node):
        # The module's functions (a read in a function of the queue) and whether it starts
        # queue runners itself (where a slice pipeline's iterator gets initialized).
        self._functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        self._uses.update(_names_counted(node))
        served = {name for name, _ in self._served_calls([node])}
        self._starts = "start_queue_runners" in served
        # Where the runners start, the slice pipelines' iterators get initialized. A run of
        # the collection is harmless where none was converted after all.
        self._sliced = "slice_input_producer" in served
        return True

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
        body = self._block(original_node.body, updated_node.body)
        # A function that only read for the converted pipelines goes with its reader (its
        # name counted once where it is defined).
        gone = {name for name, count in self._inlined.items() if self._uses[name] == count + 1}
        body = [s for s in body if not (isinstance(s, cst.FunctionDef) and s.name.value in gone)]
        return updated_node.with_changes(body=body)

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
            if served in ("string_input_producer", "slice_input_producer"):
                try:
                    replaced, index = self._convert(original, index, served)
                    body.extend(replaced)
                    continue
                except _NotThisPattern as why:
                    self._keep(original[index], str(why))
            start = self._sliced and self._starts_runners(original[index])
            if start:
                body.extend(self._initialize(start))
            body.append(updated[index])
            index += 1
        return body

    def _served_calls(self, nodes) -> list:
        """(served name, call) of every call under `nodes` that names a served name."""
        found = []

        class Calls(cst.CSTVisitor):
            def visit_Call(inner, call):
                name = _qualified(self, call.func)
                if name:
                    found.append((name, call))

        for node in nodes:
            node.visit(Calls())
        return found

    def _starts_runners(self, statement) -> cst.Call | None:
        """The `start_queue_runners(...)` call of a simple statement, or None."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        starts = [c for n, c in self._served_calls([statement]) if n == "start_queue_runners"]
        return starts[0] if starts else None

    def _initialize(self, start: cst.Call) -> list:
        """`sess.run(<the slice pipelines' initializers>)`, for before `start` runs."""
        try:
            args = _arguments(start, ("sess", "coord", "daemon", "start", "collection"))
        except _NotThisPattern:
            return []
        tf = _tf_root(start.func)
        session = args.get("sess", f"{tf}.compat.v1.get_default_session()")
        return [_statement(f"{session}.run({tf}.compat.v1.get_collection({INITIALIZERS!r}))")]

    def _report(self, node, code: str, severity: str, message: str) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        self.findings.append(Converted(line, rules.Flag(code, severity, message, "to-tfdata")))

    def _keep(self, statement, why: str) -> None:
        self._report(
            statement,
            KEPT,
            "warning",
            f"this input pipeline stays on compat_input ({why}): --to-tfdata converts "
            "string_input_producer + one reader's read (or a function of the queue that "
            "reads) + per-example statements + batch / shuffle_batch (_join) in one block, "
            "slice_input_producer + batch / shuffle_batch, and range_input_producer(...).dequeue()",
        )

    def _convert(self, block: list, start: int, source: str) -> tuple:
        target, producer = _call_of(block[start])
        made = _arguments(
            producer, _SLICE_ARGS if source != "string_input_producer" else _PRODUCER_ARGS
        )
        if "shared_name" in made:
            raise _NotThisPattern("shared_name: share it through the tf.data service instead")
        pipeline = _Pipeline(_tf_root(producer.func), source, made)
        if source == "slice_input_producer":
            self._slices(pipeline, target)
            index, dependent = start + 1, _names_in([target])
        else:
            index, dependent = self._read(pipeline, block, start, target)
        while index < len(block):
            target, call = _call_of(block[index])
            served = _qualified(self, call.func) if call is not None else ""
            if served in _BATCHERS:
                break
            if served in _NO_TFDATA:
                raise _NotThisPattern(_NO_TFDATA[served])
            if not isinstance(block[index], cst.SimpleStatementLine):
                raise _NotThisPattern("a compound statement before the batcher")
            if _names_in([block[index]]) & dependent:
                if pipeline.readers:
                    raise _NotThisPattern("the readers' list is used before the _join")
                pipeline.example.append(block[index])
                dependent |= _bound(block[index])
            else:
                pipeline.kept.append(block[index])
            index += 1
        else:
            raise _NotThisPattern("no batch or shuffle_batch follows in the same block")
        self._batcher(pipeline, call, target, block[index + 1 :], dependent)
        pipeline.batch_comments = block[index].leading_lines
        if pipeline.reads_in:
            self._inlined[pipeline.reads_in] += 1
        self._report(
            block[start],
            CONVERTED,
            "note",
            f"{source} + {pipeline.reader + ' + ' if pipeline.reader else ''}"
            f"{pipeline.batcher} converted to tf.data: {self._differences(pipeline)}",
        )
        return self._emit(pipeline, block[start].leading_lines), index + 1

    def _slices(self, pipeline: _Pipeline, target) -> None:
        if not self._starts:
            raise _NotThisPattern(
                "the program starts no queue runners itself (a Supervisor or a "
                "MonitoredSession does), so nothing would initialize its iterator"
            )
        if isinstance(target, cst.Name):
            pipeline.params = f"*{target.value}"
        elif isinstance(target, (cst.Tuple, cst.List)) and all(
            isinstance(e.value, cst.Name) for e in target.elements
        ):
            pipeline.params = ", ".join(e.value.value for e in target.elements)
        else:
            raise _NotThisPattern("its tensors are not assigned to names")

    def _read(self, pipeline: _Pipeline, block: list, start: int, queue_target) -> tuple:
        """The reader and its read after a string_input_producer: (next index, dependent)."""
        if not isinstance(queue_target, cst.Name):
            raise _NotThisPattern("its filename queue is not assigned to a name")
        queue = queue_target.value
        index = start + 1
        read_target, read_value = _assigned(block[index]) if index < len(block) else (None, None)
        looped = self._loop_read(pipeline, block, index, queue) if index < len(block) else None
        if looped is not None:
            # `examples = []`, then `for _ in range(n):` read, compute, append.
            record, body, returned, name = looped
            pipeline.params, pipeline.returned = record, returned
            pipeline.example.extend(body)
            self._unused(queue, block[index + 2 :])
            return index + 2, {name}
        helper = self._helper_read(read_value, queue, pipeline)
        if helper is not None:
            # `x, y = read_and_decode(q)`, or `[read_and_decode(q) for _ in range(n)]`.
            value, body, returned = helper
            pipeline.params = value
            pipeline.example.extend(body)
            if not pipeline.readers:
                if not isinstance(read_target, (cst.Name, cst.Tuple, cst.List)):
                    raise _NotThisPattern("the read's result is not assigned to names")
                if _code(read_target) != returned:  # `image, label = read(q)` returns those
                    pipeline.example.append(_statement(f"{_code(read_target)} = {returned}"))
            else:
                pipeline.returned = returned
                if not isinstance(read_target, cst.Name):
                    raise _NotThisPattern("the readers' list is not assigned to a name")
            self._unused(queue, block[index + 1 :])
            return index + 1, _names_in([read_target])
        reader_name = None
        target, call = _call_of(block[index]) if index < len(block) else (None, None)
        if call is not None and _qualified(self, call.func) in _READERS:
            if not isinstance(target, cst.Name):
                raise _NotThisPattern("its reader is not assigned to a name")
            self._reader(pipeline, call)
            reader_name = target.value
            index += 1
        read_target, read = _call_of(block[index]) if index < len(block) else (None, None)
        value = self._reader_read(
            pipeline, read_target, read, queue, reader_name, block[index + 1 :]
        )
        if value is None:
            raise _NotThisPattern(
                self._other_reader(block[start + 1 : index + 1])
                or "no reader's read(queue) follows the producer"
            )
        pipeline.params = value
        self._unused(queue, block[index + 1 :])
        if reader_name:
            self._unused(reader_name, block[index + 1 :])
        return index + 1, {value}

    def _unused(self, name: str, rest: list) -> None:
        if name in _names_in(rest):
            raise _NotThisPattern(f"{name} is used again after the read")

    def _reader(self, pipeline: _Pipeline, call: cst.Call) -> None:
        pipeline.reader = _qualified(self, call.func)
        pipeline.reader_args = _arguments(call, ("skip_header_lines", "name"))
        if "options" in pipeline.reader_args or (
            pipeline.reader == "TFRecordReader" and pipeline.reader_args.keys() - {"name"}
        ):
            raise _NotThisPattern("the reader has options")

    def _reader_read(self, pipeline, read_target, read, queue, reader_name, after) -> str | None:
        """The record's name in `_, value = reader.read(queue)`, or None if it is no read;
        `after`: the statements that follow, which must not use the key."""
        if read is None or not (
            isinstance(read.func, cst.Attribute) and read.func.attr.value == "read"
        ):
            return None
        owner = read.func.value
        if reader_name is None:
            if not isinstance(owner, cst.Call) or _qualified(self, owner.func) not in _READERS:
                raise _NotThisPattern(
                    self._other_reader([owner])
                    or "its reader is not a TextLineReader or TFRecordReader"
                )
            self._reader(pipeline, owner)
        elif not (isinstance(owner, cst.Name) and owner.value == reader_name):
            raise _NotThisPattern("the read is not the reader's")
        if len(read.args) != 1 or _code(read.args[0].value) != queue:
            raise _NotThisPattern("the read is not of the producer's queue")
        if not (isinstance(read_target, cst.Tuple) and len(read_target.elements) == 2):
            raise _NotThisPattern("the read is not unpacked as key, value")
        key, value = (_code(e.value) for e in read_target.elements)
        if key != "_" and key in _names_in(after):
            raise _NotThisPattern(f"the reader's key {key} is used")
        return value

    def _helper_read(self, value, queue: str, pipeline: _Pipeline):
        """(record name, statements, returned code) when `value` calls a function of the
        module that reads the queue (`read(q)`, or `[read(q) for _ in range(n)]`), else
        None."""
        call = value
        if isinstance(value, cst.ListComp):
            call = value.elt
            loop = value.for_in
            if not (
                isinstance(call, cst.Call)
                and loop.inner_for_in is None
                and not loop.ifs
                and _range_count(loop.iter) is not None
                and isinstance(loop.target, cst.Name)
                and loop.target.value not in _names_in([call])
            ):
                return None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in self._functions
            and len(call.args) == 1
            and _code(call.args[0].value) == queue
        ):
            return None
        function = self._functions[call.func.value]
        params = function.params
        if (
            len(params.params) != 1
            or isinstance(params.star_arg, cst.Param)
            or params.kwonly_params
            or params.star_kwarg
        ):
            raise _NotThisPattern(f"{call.func.value} takes more than the queue")
        body = list(function.body.body)
        if body and _docstring(body[0]):
            body = body[1:]
        record, rest, last = self._reads(
            pipeline, body, params.params[0].name.value, call.func.value
        )
        if not (isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
            raise _NotThisPattern(f"{call.func.value} does not end with a return")
        if isinstance(value, cst.ListComp):
            pipeline.readers = _range_count(value.for_in.iter)
        pipeline.reads_in = call.func.value
        return record, rest, _code(last.body[0].value)

    def _reads(self, pipeline: _Pipeline, body: list, queue: str, where: str) -> tuple:
        """(record name, the statements after the read, the last one) of `body`: an
        optional reader, its read of `queue`, simple statements."""
        reader_name = None
        target, made = _call_of(body[0]) if body else (None, None)
        if made is not None and _qualified(self, made.func) in _READERS:
            if not isinstance(target, cst.Name):
                raise _NotThisPattern("its reader is not assigned to a name")
            self._reader(pipeline, made)
            reader_name = target.value
            body = body[1:]
        read_target, read = _call_of(body[0]) if body else (None, None)
        record = self._reader_read(pipeline, read_target, read, queue, reader_name, body[1:])
        if record is None:
            raise _NotThisPattern(
                self._other_reader(body) or f"{where} does not start with a reader's read"
            )
        *rest, last = body[1:] or [None]
        if any(not isinstance(s, cst.SimpleStatementLine) for s in [*rest, last]):
            raise _NotThisPattern(f"a compound statement in {where}")
        if {queue, reader_name} & _names_in(rest + [last]):
            raise _NotThisPattern(f"{where} uses its queue or reader again")
        return record, rest, last

    def _other_reader(self, nodes: list) -> str:
        """Why a reader other than the converted ones under `nodes` stays, or ""."""
        found = [
            n for n, _ in self._served_calls(nodes) if n.endswith("Reader") and n not in _READERS
        ]
        return f"{found[0]} is not converted yet" if found else ""

    def _loop_read(self, pipeline: _Pipeline, block: list, index: int, queue: str):
        """`examples = []` and `for _ in range(n):` reading the queue and appending an
        example, at `index`: (record, statements, returned code, list name), else None."""
        target, value = _assigned(block[index])
        loop = block[index + 1] if index + 1 < len(block) else None
        if not (
            isinstance(target, cst.Name)
            and isinstance(value, cst.List)
            and not value.elements
            and isinstance(loop, cst.For)
            and _range_count(loop.iter) is not None
            and isinstance(loop.target, cst.Name)
            and loop.orelse is None
            and isinstance(loop.body, cst.IndentedBlock)
        ):
            return None
        name = target.value
        record, rest, last = self._reads(pipeline, list(loop.body.body), queue, "the loop")
        appended = last.body[0]
        if not (
            isinstance(appended, cst.Expr)
            and isinstance(appended.value, cst.Call)
            and _code(appended.value.func) == f"{name}.append"
            and len(appended.value.args) == 1
        ):
            raise _NotThisPattern(f"the loop does not end with {name}.append(example)")
        example = appended.value.args[0].value
        if loop.target.value in _names_in([*rest, example]):
            raise _NotThisPattern("the loop's example depends on its counter")
        if isinstance(example, cst.List):  # tf.data takes a tuple for a list of components
            example = cst.Tuple(elements=example.elements)
        pipeline.readers = _range_count(loop.iter)
        return record, rest, _code(example), name

    def _batcher(self, pipeline, call: cst.Call, target, after: list, dependent: set) -> None:
        batcher = _qualified(self, call.func)
        pipeline.batcher, pipeline.target = batcher, target
        if batcher in _JOINS:
            args = _arguments(call, _JOIN_ARGS[batcher])
            if not pipeline.readers or args["tensors_list"] not in dependent:
                raise _NotThisPattern(f"{batcher} of other than a function's reads")
        elif pipeline.readers:
            raise _NotThisPattern("a list of reads batched by other than a _join")
        else:
            args = _arguments(call, _ARGS.get(batcher, _BATCH_ARGS))
            tensors = cst.parse_expression(args["tensors"])
            if not isinstance(tensors, (cst.List, cst.Tuple)):
                raise _NotThisPattern("the batcher's tensors are not a list")
            names = [_code(e.value) for e in tensors.elements]
            pipeline.returned = names[0] if len(names) == 1 else "(" + ", ".join(names) + ",)"
            if batcher == _BUCKET:
                # contrib's (lengths, [tensors...]): the length travels as the first component.
                tf = pipeline.root
                length = f"{tf}.cast({args['input_length']}, {tf}.int32)"
                pipeline.returned = f"({length}, ({', '.join(names)},))"
        pipeline.args = args
        # dynamic_pad: tf.data's bucketing pads every batch (without it, legacy's shapes were
        # fully defined, so padding changes nothing).
        padded = ("dynamic_pad",) if batcher != _BUCKET else ()
        for unsupported in ("enqueue_many", "shapes", *padded, "shared_name"):
            if args.get(unsupported, "False") not in ("False", "None"):
                raise _NotThisPattern(f"the batcher's {unsupported}")
        if args.get("keep_input", "True") != "True":
            raise _NotThisPattern("the batcher's keep_input")
        # The batch may take the example's names (`image, label = batch([image, label])`).
        per_example = dependent - _target_names(target)
        used = per_example & _names_in(after)
        if used:
            raise _NotThisPattern(
                f"{', '.join(sorted(used))}, computed per example, is used after the batcher"
            )

    @staticmethod
    def _differences(pipeline: _Pipeline) -> str:
        said = []
        if pipeline.made.get("shuffle", "True") != "False" or pipeline.batcher.startswith(
            "shuffle"
        ):
            said.append(
                "the shuffle order is tf.data's, not legacy's (each epoch holds the same examples)"
            )
        if pipeline.readers:
            said.append(
                f"{pipeline.readers} files read at once, interleaved by tf.data (legacy's "
                "readers took turns on threads)"
            )
        if pipeline.args.get("num_threads", "1") not in ("1",):
            said.append("one reading thread, in order (legacy's several threads interleaved)")
        smaller = pipeline.args.get("allow_smaller_final_batch", "False") != "False"
        if pipeline.batcher == _BUCKET and smaller:
            said.append(
                "each bucket's last partial batch comes at the end (legacy lost them); "
                "the bucket outputs are tuples"
            )
        elif pipeline.batcher == _BUCKET:
            said.append("the bucket outputs are tuples (contrib gave lists)")
        if pipeline.source == "slice_input_producer":
            said.append(
                f"its iterator is initialized where the program starts its queue runners "
                f"(the graph collection {INITIALIZERS!r})"
            )
        return "; ".join(said) or "the same batches"

    @staticmethod
    def _bucketed(dataset: str, args: dict, drop: str) -> str:
        """tf.data's bucket_by_sequence_length: contrib's buckets ([b[i-1], b[i]), one
        below the first boundary, one from the last on), batches leaving as buckets fill."""
        boundaries, size = args["bucket_boundaries"], args["batch_size"]
        sizes = size if size.startswith(("[", "(")) else f"[{size}] * (len({boundaries}) + 1)"
        return (
            f"{dataset} = {dataset}.bucket_by_sequence_length(lambda length, tensors: length, "
            f"{boundaries}, {sizes}, drop_remainder={drop})"
        )

    def _emit(self, p: _Pipeline, leading: list) -> list:
        self._count += 1
        n, tf = self._count, p.root
        dataset = f"_dataset_{n}"
        lines = [
            f"def _example_{n}({p.params}):",
            *(
                "    " + line if line.strip() else ""
                for s in p.example
                for line in cst.Module(body=[s]).code.rstrip("\n").splitlines()
            ),
            f"    return {p.returned}",
            "",
            "",
        ]
        shuffled = p.made.get("shuffle", "True") != "False"
        seed = p.made.get("seed", "None")
        if p.source == "slice_input_producer":
            # Indices, as legacy shuffles: the preloaded tensors are never copied.
            slices = f"_slices_{n}"
            count = f"{tf}.shape({slices}[0], out_type={tf}.int64)[0]"
            lines += [
                f"{slices} = [{tf}.convert_to_tensor(t) for t in {p.made['tensor_list']}]",
                f"{dataset} = {tf}.data.Dataset.range({count})",
            ]
            if shuffled:
                lines.append(f"{dataset} = {dataset}.shuffle({count}, seed={seed})")
            lines += [
                f"{dataset} = {dataset}{_repeat(p.made)}",
                f"{dataset} = {dataset}.map(lambda i: _example_{n}("
                f"*[{tf}.gather(t, i) for t in {slices}]))",
            ]
        else:
            files = p.made["string_tensor"]
            skip = p.reader_args.get("skip_header_lines")
            read = f"{tf}.data.{_READERS[p.reader]}(f)" + (
                f".skip({skip})" if skip not in (None, "None", "0") else ""
            )
            lines.append(f"{dataset} = {tf}.data.Dataset.from_tensor_slices({files})")
            if shuffled:
                lines.append(
                    f"{dataset} = {dataset}.shuffle({tf}.size({files}, out_type={tf}.int64), "
                    f"seed={seed})"
                )
            lines.append(f"{dataset} = {dataset}{_repeat(p.made)}")
            if p.readers:
                lines.append(
                    f"{dataset} = {dataset}.interleave(lambda f: {read}, cycle_length={p.readers})"
                )
            else:
                lines.append(f"{dataset} = {dataset}.flat_map(lambda f: {read})")
            lines.append(f"{dataset} = {dataset}.map(_example_{n})")
        if p.batcher.startswith("shuffle"):
            lines.append(
                f"{dataset} = {dataset}.shuffle({p.args['capacity']}, "
                f"seed={p.args.get('seed', 'None')})"
            )
        smaller = p.args.get("allow_smaller_final_batch", "False")
        drop = {"True": "False", "False": "True"}.get(smaller, f"not ({smaller})")
        if p.batcher == _BUCKET:
            lines.append(self._bucketed(dataset, p.args, drop))
        else:
            lines.append(
                f"{dataset} = {dataset}.batch({p.args['batch_size']}, drop_remainder={drop})"
            )
        target = _code(p.target)
        if p.source == "slice_input_producer":
            iterator = f"_iterator_{n}"
            lines += [
                f"{iterator} = {tf}.compat.v1.data.make_initializable_iterator({dataset})",
                f"{tf}.compat.v1.add_to_collection({INITIALIZERS!r}, {iterator}.initializer)",
                f"{target} = {iterator}.get_next()",
            ]
        else:
            lines.append(
                f"{target} = {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()"
            )
        module = cst.parse_module("\n".join(lines) + "\n")
        comment = cst.EmptyLine(
            comment=cst.Comment(
                f"# compat-input migrate --to-tfdata: the {p.batcher} input as tf.data "
                "(migration_guide.md#to-tfdata)"
            )
        )
        body = [
            # Blank lines indented inside a block would end in spaces.
            s.with_changes(leading_lines=[e.with_changes(indent=False) for e in s.leading_lines])
            for s in module.body
        ]
        # The producer's and the batcher's own comments stay above what they became.
        body[0] = body[0].with_changes(leading_lines=[*leading, comment])
        body[-1] = body[-1].with_changes(leading_lines=p.batch_comments)
        return [*p.kept, *body]


def _docstring(statement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def convert(module: cst.Module) -> tuple:
    """`module` with its recognized pipelines as tf.data, and the findings."""
    wrapper = cst.MetadataWrapper(module)
    converter = ToTfData()
    return wrapper.visit(converter), converter.findings
