"""Room: the read in a method of the program's reader classes, in any module given to
`migrate` (youtube-8m's readers.py):

    class VideoLevelReader(BaseReader):
        def prepare_reader(self, filename_queue, batch_size=1024):
            reader = tf.TFRecordReader()
            _, serialized = reader.read_up_to(filename_queue, batch_size)
            ...statements...
            return self.prepare_serialized_examples(serialized)

    # train.py, where a flag chose the reader's class:
    data = [reader.prepare_reader(filename_queue) for _ in range(num_readers)]
    batch = tf.train.shuffle_batch_join(data, ..., enqueue_many=True)

Which class a call reaches is known only when the program runs. So each class that
defines the method gets a twin beside it, `prepare_reader_dataset(self, filename, ...)`:
one file's records as tf.data (in blocks where it read_up_to, which ended with each file),
mapped by the method's statements as written; and the call site reads every file through
`reader.prepare_reader_dataset(f)`. A method converts where every class of the project
that defines it reads so, or raises NotImplementedError (an abstract base's), and where
the project calls it with the queue alone.
"""

import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider

from . import reader_chain
from . import syntax
from .room import Pipeline
from .syntax import NotThisPattern


@dataclasses.dataclass
class Project:
    """The reading methods of every module `migrate --to-tfdata` was given: the names of
    those it converts, and for each name why not where it does not."""

    methods: set = dataclasses.field(default_factory=set)
    why_not: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def scan(cls, sources: list) -> "Project":
        """The project of the modules' `sources` (texts; one Python cannot parse is
        left out, as migrate leaves it)."""
        scans = []
        for source in sources:
            try:
                wrapper = cst.MetadataWrapper(cst.parse_module(source))
            except cst.ParserSyntaxError:
                continue
            scans.append(_Scan())
            wrapper.visit(scans[-1])
        project = cls()
        called = set().union(*(s.called for s in scans)) if scans else set()
        kinds: dict = {}
        for scan in scans:
            for name, kind in scan.defined:
                kinds.setdefault(name, set()).add(kind)
        for name, found in kinds.items():
            if name not in called or "reads" not in found:
                continue
            twin = reader_chain.TWIN.format(name)
            if twin in kinds:
                project.why_not[name] = f"a class of the program defines {twin} already"
            elif found <= {"reads", "abstract"}:
                project.methods.add(name)
            else:
                project.why_not[name] = (
                    f"a class of the program defines {name} without the read the others make"
                )
        return project


class _Scan(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self):
        super().__init__()
        self.defined: list = []  # (method name, "reads" / "abstract" / "other")
        self.called: set = set()  # methods called as `obj.name(one argument)`

    def visit_ClassDef(self, node):
        for function in _methods(node):
            if read(self, function) is not None:
                kind = "reads"
            else:
                kind = "abstract" if _abstract(function) else "other"
            self.defined.append((function.name.value, kind))

    def visit_Call(self, node):
        if isinstance(node.func, cst.Attribute) and len(node.args) == 1:
            self.called.add(node.func.attr.value)


def _methods(node: cst.ClassDef) -> list:
    if not isinstance(node.body, cst.IndentedBlock):
        return []
    return [s for s in node.body.body if isinstance(s, cst.FunctionDef)]


def _abstract(function: cst.FunctionDef) -> bool:
    body = _without_docstring(function)
    return len(body) == 1 and "NotImplementedError" in syntax.code(body[0])


def _without_docstring(function: cst.FunctionDef) -> list:
    body = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    return body[1:] if body and syntax.docstring(body[0]) else body


def read(ctx, function: cst.FunctionDef):
    """(pipeline with its reader, record name, statements, returned code) of a method
    `(self, queue, ...)` that reads its queue and returns, else None."""
    params = function.params
    if len(params.params) < 2 or params.params[0].name.value != "self":
        return None
    queue = params.params[1].name.value
    body = _without_docstring(function)
    made = [c for n, c in syntax.served_calls(ctx, body[:2]) if n in reader_chain.READERS]
    if not made:
        return None
    pipeline = Pipeline(syntax.tf_root(made[0].func), "string_input_producer", {}, queue=queue)
    try:
        record, rest, last = reader_chain.reads(ctx, pipeline, body, queue, function.name.value)
    except NotThisPattern:
        return None
    if not (isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
        return None
    return pipeline, record, rest, syntax.code(last.body[0].value)


def twins(ctx, node: cst.ClassDef, project: Project, original: cst.ClassDef) -> cst.ClassDef:
    """The class with a tf.data twin after each of its methods the project converts."""
    if project is None or not isinstance(node.body, cst.IndentedBlock):
        return node
    found = {
        f.name.value: read(ctx, f) for f in _methods(original) if f.name.value in project.methods
    }
    body = []
    for statement in node.body.body:
        body.append(statement)
        if isinstance(statement, cst.FunctionDef) and found.get(statement.name.value):
            body.append(_twin(statement, *found[statement.name.value]))
    return node.with_changes(body=node.body.with_changes(body=body))


def _twin(function: cst.FunctionDef, p: Pipeline, record: str, rest: list, returned: str):
    chain = reader_chain.records(p, "filename")
    if p.block:
        chain += f".batch({p.block})"  # read_up_to's blocks, which ended with each file
    others = "".join(
        f", {param.name.value}" + (f"={syntax.code(param.default)}" if param.default else "")
        for param in function.params.params[2:]
    )
    name = function.name.value
    lines = [
        f"def {reader_chain.TWIN.format(name)}(self, filename{others}):",
        f'    """{name}\'s records of one file as tf.data (compat-input migrate --to-tfdata)."""',
        "",
        f"    def _example({record}):",
        *(
            "        " + line
            for s in rest
            for line in syntax.code(s.with_changes(leading_lines=[])).rstrip("\n").splitlines()
        ),
        f"        return {returned}",
        "",
        f"    return {chain}.map(_example)",
    ]
    twin = cst.parse_statement("\n".join(lines) + "\n")
    return twin.with_changes(leading_lines=[cst.EmptyLine(indent=False)])


def method_read(ctx, pipeline: Pipeline, call, queue: str):
    """(record name, statements, returned code) when `call` is `obj.method(queue)` of a
    method the project converts; None where it is no such call."""
    project = getattr(ctx, "project", None)
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and len(call.args) == 1
        and syntax.code(call.args[0].value) == queue
        and project is not None
    ):
        return None
    name = call.func.attr.value
    if name in project.why_not:
        raise NotThisPattern(project.why_not[name])
    if name not in project.methods:
        return None
    pipeline.reads_by = syntax.code(call.func)
    pipeline.reader = f"{name}()"
    return "example", [], "example"


def unseen_read(ctx, rest: list, queue: str) -> str:
    """Why no room saw the read of `queue`: where the queue goes instead."""
    found = syntax.passed_to(rest, queue)
    if found is None:
        return "no reader's read(queue) follows the producer"
    statement, call = found
    line = ctx.get_metadata(PositionProvider, statement).start.line
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("read", "read_up_to"):
        return (
            f"the reader's {call.func.attr.value} at line {line} is not assigned on a line "
            "of its own (`_, value = reader.read(queue)`); several reads joined convert as "
            "calls of a function of the queue"
        )
    return (
        f"the queue is read inside {syntax.code(call.func)}(...) at line {line}, which "
        "--to-tfdata does not see into (a function of another module, or a method that "
        "no class of the modules given to migrate defines with a reader's read); a "
        "function of this module, or a method of a reader class given too, converts"
    )
