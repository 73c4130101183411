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
(`[read(q) for _ in range(n)]`), or in a method of a reader class of any module given to
migrate (reading_methods.py). Preloaded data is the other source:

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

Each pattern is a room of its own (room.py says the interface): a file queue read by
reader_chain.py, reading_function.py or joins.py; preloaded_slices.py; index_producer.py;
batching.py ends them. This module walks the blocks and asks them.
"""

import collections
import dataclasses

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata import QualifiedNameProvider

from .. import rules
from . import batching
from . import preloaded_slices
from . import reader_chain
from . import reading_methods
from . import syntax
from .hand_built_queue import QUEUES
from .hand_built_queue import HandBuiltQueue
from .index_producer import IndexProducer
from .joins import Joins
from .preloaded_slices import PreloadedSlices
from .reader_chain import ReaderChain
from .reading_function import ReadingFunction
from .reading_methods import Project
from .room import CONVERTED
from .room import INITIALIZERS
from .room import KEPT
from .room import Converted
from .room import Pipeline
from .syntax import NotThisPattern

__all__ = ["CONVERTED", "INITIALIZERS", "KEPT", "Converted", "Project", "ToTfData", "convert"]

# Producers --to-tfdata leaves on compat_input for now, and why.
_NOT_YET = {"input_producer": "input_producer is not converted yet"}
_PRODUCER_ARGS = ("string_tensor", "num_epochs", "shuffle", "seed", "capacity", "shared_name")
# How a file queue may be read, in the order they are tried (a loop read before a call).
_READS = (Joins(), ReadingFunction(), ReaderChain())
_SLICES = PreloadedSlices()
_INDICES = IndexProducer()
_BATCHING = batching.Batching()
# What ends a pipeline: a batcher, or a queue the program fills and dequeues itself.
_ENDS = {
    **{name: _BATCHING for name in batching.BATCHERS},
    **dict.fromkeys(QUEUES, HandBuiltQueue()),
}
# A function that returns the example it read, unbatched.
_UNBATCHED = batching.Unbatched()
_ENDS[batching.UNBATCHED] = _UNBATCHED


class ToTfData(cst.CSTTransformer):
    """Rewrites the pipelines its rooms recognize; `findings` says what it did and left."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, project=None):
        super().__init__()
        self.project = project  # reading_methods.Project: the reader classes of the program
        self.findings: list = []
        self.functions: dict = {}  # the module's functions, by name
        self.starts = False  # whether the program starts queue runners itself
        self._count = 0
        self._sliced = False
        self._uses: collections.Counter = collections.Counter()
        self._inlined: collections.Counter = collections.Counter()

    def visit_Module(self, node):
        # The module's functions (a read in a function of the queue) and whether it starts
        # queue runners itself (where a slice pipeline's iterator gets initialized).
        self.functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        self._uses.update(syntax.names_counted(node))
        served = {name for name, _ in syntax.served_calls(self, [node])}
        self.starts = "start_queue_runners" in served
        # Where the runners start, the slice pipelines' iterators get initialized. A run of
        # the collection is harmless where none was converted after all.
        self._sliced = "slice_input_producer" in served
        return True

    def leave_Call(self, original_node, updated_node):
        made = _INDICES.recognize(self, original_node)
        if made is None:
            return updated_node
        tf = syntax.tf_root(original_node.func.value.func)
        expression, differences = _INDICES.rewrite(made, tf)
        self._report(
            original_node,
            CONVERTED,
            "note",
            f"range_input_producer(...).dequeue() converted to tf.data: {differences}",
        )
        return expression

    def leave_Module(self, original_node, updated_node):
        body = self._block(original_node.body, updated_node.body)
        # A batcher of a branch was met before the pipeline around it converted.
        spans = [(f.line, f.last or f.line) for f in self.findings if f.flag.code == CONVERTED]
        self.findings = [
            f
            for f in self.findings
            if f.flag.code != KEPT or not any(a <= f.line <= b for a, b in spans)
        ]
        # A function that only read for the converted pipelines goes with its reader (its
        # name counted once where it is defined).
        gone = {name for name, count in self._inlined.items() if self._uses[name] == count + 1}
        body = [s for s in body if not (isinstance(s, cst.FunctionDef) and s.name.value in gone)]
        return updated_node.with_changes(body=body)

    def leave_ClassDef(self, original_node, updated_node):
        return reading_methods.twins(self, updated_node, self.project, original_node)

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self._block(original_node.body, updated_node.body))

    def _block(self, original: list, updated: list) -> list:
        # `original` for the metadata (names, lines), `updated` for what inner blocks became.
        body, index = [], 0
        explained = False  # whether the batcher to come belongs to a producer kept above
        while index < len(original):
            served = self._served(original[index])
            if served in _NOT_YET:
                self._keep(original[index], _NOT_YET[served])
            if served in batching.BATCHERS and not explained:
                # Every pipeline left says why, the ones no producer starts here too
                # (facenet batches dequeues of a queue the program fills from Python).
                self._keep(
                    original[index],
                    f"the {served} batches examples that no string_input_producer or "
                    "slice_input_producer of this block reads; --to-tfdata follows a "
                    "pipeline from its producer",
                )
            if served in batching.BATCHERS:
                explained = False
            if served in ("string_input_producer", "slice_input_producer"):
                # A pipeline followed through an `if` may convert one branch and then find
                # the other differs: what the first one reported and counted goes again.
                before = len(self.findings), self._count, collections.Counter(self._inlined)
                try:
                    replaced, index = self._convert(original, index, served)
                    body.extend(replaced)
                    continue
                except NotThisPattern as why:
                    del self.findings[before[0] :]
                    self._count, self._inlined = before[1:]
                    self._keep(original[index], str(why))
                    explained = True
            start = self._sliced and preloaded_slices.starts_runners(self, original[index])
            if start:
                body.extend(preloaded_slices.initialize(start))
            body.append(updated[index])
            index += 1
        return body

    def _report(self, node, code: str, severity: str, message: str, last=None) -> None:
        """A finding at `node`'s line; `last`: the last statement it covers, if another."""
        line = self.get_metadata(PositionProvider, node).start.line
        end = self.get_metadata(PositionProvider, last).end.line if last is not None else 0
        flag = rules.Flag(code, severity, message, "to-tfdata")
        self.findings.append(Converted(line, flag, end))

    def _served(self, statement) -> str:
        """The served name `statement` calls in `x = call(...)`, or in `return batch(...)`
        (a batcher only: a pipeline's other statements are assignments), else ""."""
        target, call = syntax.called(statement)
        served = syntax.qualified(self, call.func) if call is not None else ""
        return served if target is not None or served in batching.BATCHERS else ""

    def _line(self, node) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _keep(self, statement, why: str) -> None:
        self._report(
            statement,
            KEPT,
            "warning",
            f"this input pipeline stays on compat_input ({why}): --to-tfdata converts "
            "string_input_producer + one reader's read (or a function of the queue that "
            "reads) + per-example statements + batch / shuffle_batch (_join), or a FIFOQueue / "
            "RandomShuffleQueue filled by its QueueRunner and read by dequeue_many, in one "
            "block; slice_input_producer + batch / shuffle_batch; and "
            "range_input_producer(...).dequeue()",
        )

    def _source(self, block: list, start: int, source: str, pipeline: Pipeline):
        """The room that reads the producer's examples, and (next index, dependent)."""
        if source == "slice_input_producer":
            return _SLICES, _SLICES.recognize(self, block, start, pipeline)
        queue, _ = syntax.call_of(block[start])
        if not isinstance(queue, cst.Name):
            raise NotThisPattern("its filename queue is not assigned to a name")
        pipeline.queue = queue.value
        for room in _READS:
            found = room.recognize(self, block, start + 1, pipeline)
            if found is not None:
                return room, found
        raise NotThisPattern(reading_methods.unseen_read(self, block[start + 1 :], queue.value))

    def _convert(self, block: list, start: int, source: str) -> tuple:
        producer = block[start]
        _, call = syntax.call_of(producer)
        made = syntax.arguments(
            call, preloaded_slices.ARGS if source != "string_input_producer" else _PRODUCER_ARGS
        )
        if "shared_name" in made:
            raise NotThisPattern("shared_name: share it through the tf.data service instead")
        pipeline = Pipeline(syntax.tf_root(call.func), source, made)
        room, (index, dependent) = self._source(block, start, source, pipeline)
        return self._follow(
            block, index, pipeline, room, dependent, producer, producer.leading_lines
        )

    def _follow(self, statements, index, pipeline, room, dependent, producer, leading) -> tuple:
        """From `statements[index]` on: the per-example statements, then the end room;
        (what replaces them, the index after the end). `leading`: the producer's comments,
        kept above what it became."""
        while index < len(statements):
            statement = statements[index]
            served = self._served(statement)
            if served in _ENDS:
                break
            if _UNBATCHED.returns_example(statement, dependent):
                served = batching.UNBATCHED
                break
            if served in batching.NO_TFDATA:
                raise NotThisPattern(batching.NO_TFDATA[served])
            if isinstance(statement, cst.If) and not syntax.names_in([statement.test]) & dependent:
                return self._split(statements, index, pipeline, room, dependent, producer)
            compound = not isinstance(statement, cst.SimpleStatementLine)
            if compound and syntax.leaves_its_function(statement):
                raise NotThisPattern(
                    f"the {type(statement).__name__.lower()} statement at line "
                    f"{self._line(statement)} returns or binds another scope's names before "
                    "the batcher: move that out of it"
                )
            if syntax.names_in([statement]) & dependent:
                if pipeline.readers:
                    raise NotThisPattern("the readers' list is used before the _join")
                # Loops and branches computing the example go into its function as they
                # are written, with the empty lists they fill (made before them).
                used = syntax.names_in([statement])
                for early in [k for k in pipeline.kept if syntax.empty_container(k)]:
                    if syntax.bound(early) & used:
                        pipeline.kept.remove(early)
                        pipeline.example.append(early)
                        dependent |= syntax.bound(early)
                pipeline.example.append(statement)
                dependent |= syntax.bound(statement)
            else:
                pipeline.kept.append(statement)
            index += 1
        else:
            raise NotThisPattern("no batch or shuffle_batch follows in the same block")
        end = _ENDS[served]
        after = end.recognize(self, statements, index, pipeline, dependent)
        if pipeline.reads_in:
            self._inlined[pipeline.reads_in] += 1
        source = pipeline.source
        self._report(
            producer,
            CONVERTED,
            "note",
            f"{source} + {pipeline.reader + ' + ' if pipeline.reader else ''}"
            f"{pipeline.batcher} converted to tf.data: {batching.differences(pipeline)}",
            last=statements[after - 1],
        )
        return self._emit(room, end, pipeline, leading), after

    def _split(self, statements, index, pipeline, room, dependent: set, producer) -> tuple:
        """An `if` whose test is not computed per example (resnet's `if mode == 'train':`,
        each branch with its own steps and its own queue) before the end: the pipeline is
        followed through each branch on its own, and the `if` chooses between the two
        tf.data pipelines. The statements after the `if` up to the end are in both, or
        each branch ends its own pipeline."""
        node, rest = statements[index], list(statements[index + 1 :])
        if node.orelse is None:
            branches = [list(node.body.body), []]
        elif isinstance(node.orelse, cst.Else):
            branches = [list(node.body.body), list(node.orelse.body.body)]
        else:  # elif: the rest of the chain is the other branch.
            branches = [list(node.body.body), [node.orelse]]
        emitted, ends = [], set()
        for branch in branches:
            own = dataclasses.replace(pipeline, example=list(pipeline.example), kept=[])
            body, after = self._follow(branch + rest, 0, own, room, set(dependent), producer, [])
            if after <= len(branch):
                # Each branch batches on its own (video prediction's `if FLAGS.use_state:`
                # with a batch and a return in each): what follows its end stays in it.
                body, after = [*body, *branch[after:]], 0
            emitted.append(body)
            ends.add(max(after - len(branch), -1))
        if -1 in ends and ends != {-1}:
            raise NotThisPattern("a branch of the if ends the pipeline on its own")
        if len(ends) != 1:
            raise NotThisPattern("the branches of the if end the pipeline at other statements")
        block = node.body.with_changes(body=emitted[0])
        otherwise = cst.Else(body=cst.IndentedBlock(body=emitted[1]))
        if isinstance(node.orelse, cst.Else):
            otherwise = node.orelse.with_changes(
                body=node.orelse.body.with_changes(body=emitted[1])
            )
        chosen = node.with_changes(
            body=block,
            orelse=otherwise,
            leading_lines=[*producer.leading_lines, *node.leading_lines],
        )
        return [*pipeline.kept, chosen], index + 1 + max(ends.pop(), 0)

    def _emit(self, room, end, p: Pipeline, leading: list) -> list:
        self._count += 1
        n, tf = self._count, p.root
        lines = (
            []
            if reader_chain.identity(p)
            else [
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
        )
        lines += [
            *room.rewrite(p, n),
            *end.rewrite(p, n),
        ]
        dataset = f"_dataset_{n}"
        # `return tf.train.batch(...)` (youtube-8m's, im2txt's input functions) returns it.
        target = "return" if p.target is None else f"{syntax.code(p.target)} ="
        if p.source == "slice_input_producer":
            iterator = f"_iterator_{n}"
            lines += [
                f"{iterator} = {tf}.compat.v1.data.make_initializable_iterator({dataset})",
                f"{tf}.compat.v1.add_to_collection({p.initializers!r}, {iterator}.initializer)",
                f"{target} {iterator}.get_next()",
            ]
        else:
            lines.append(
                f"{target} {tf}.compat.v1.data.make_one_shot_iterator({dataset}).get_next()"
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


def convert(module: cst.Module, project=None) -> tuple:
    """`module` with its recognized pipelines as tf.data, and the findings; `project`
    (reading_methods.Project): the reader classes of every module given to migrate."""
    wrapper = cst.MetadataWrapper(module)
    converter = ToTfData(project)
    return wrapper.visit(converter), converter.findings
