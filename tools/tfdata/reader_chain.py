"""Room: a reader and its read of the filename queue, in the producer's block.

    q = tf.train.string_input_producer(files, num_epochs=E, shuffle=S, seed=...)
    r = tf.TextLineReader(skip_header_lines=K)      # or TFRecordReader(), or inline
    _, value = r.read(q)                            # the key unused
                                                    # or r.read_up_to(q, n): blocks

becomes the file names as a Dataset (shuffled each epoch where legacy shuffled them,
repeated `num_epochs` times) read by TextLineDataset / TFRecordDataset. The reading
function and joins rooms read through the same reader, and write the same source.
"""

import libcst as cst

from . import syntax
from .room import Pipeline
from .syntax import NotThisPattern

# The tf.data twin written beside a reader class's reading method (reading_methods.py).
TWIN = "{}_dataset"
READERS = {
    "TextLineReader": "TextLineDataset",
    "TFRecordReader": "TFRecordDataset",
    "FixedLengthRecordReader": "FixedLengthRecordDataset",
}
# Each reader's parameters, and those tf.data's dataset takes as they are.
_PARAMETERS = {
    "TextLineReader": (("skip_header_lines", "name"), ()),
    "TFRecordReader": (("name", "options"), ()),
    "FixedLengthRecordReader": (
        ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes", "name", "encoding"),
        ("record_bytes", "header_bytes", "footer_bytes"),
    ),
}


def reader(ctx, pipeline: Pipeline, call: cst.Call) -> None:
    pipeline.reader = syntax.qualified(ctx, call.func)
    names, passed = _PARAMETERS[pipeline.reader]
    pipeline.reader_args = syntax.arguments(call, names)
    if pipeline.reader_args.keys() - {"name", "skip_header_lines", *passed}:
        raise NotThisPattern("the reader has options")


def reader_read(ctx, pipeline, read_target, read, queue, reader_name, after) -> str | None:
    """The record's name in `_, value = reader.read(queue)`, or None if it is no read;
    `after`: the statements that follow, which must not use the key."""
    if read is None or not (
        isinstance(read.func, cst.Attribute) and read.func.attr.value in ("read", "read_up_to")
    ):
        return None
    if read.func.attr.value == "read_up_to":
        # `reader.read_up_to(queue, num_records)`: the records in blocks (census, youtube-8m).
        made = syntax.arguments(read, ("queue", "num_records"))
        if "num_records" not in made:
            raise NotThisPattern("read_up_to without num_records")
        pipeline.block = made["num_records"]
        read = read.with_changes(args=read.args[:1])
    owner = read.func.value
    if reader_name is None:
        if not isinstance(owner, cst.Call) or syntax.qualified(ctx, owner.func) not in READERS:
            raise NotThisPattern(
                other_reader(ctx, [owner]) or f"its reader is not one of {', '.join(READERS)}"
            )
        reader(ctx, pipeline, owner)
    elif not (isinstance(owner, cst.Name) and owner.value == reader_name):
        raise NotThisPattern("the read is not the reader's")
    if len(read.args) != 1 or syntax.code(read.args[0].value) != queue:
        raise NotThisPattern("the read is not of the producer's queue")
    if read.args[0].keyword is not None:
        raise NotThisPattern("the queue is passed by keyword")
    if not (isinstance(read_target, cst.Tuple) and len(read_target.elements) == 2):
        raise NotThisPattern("the read is not unpacked as key, value")
    key, value = (syntax.code(e.value) for e in read_target.elements)
    if key != "_" and key in syntax.names_in(after):
        raise NotThisPattern(f"the reader's key {key} is used")
    return value


def reads(ctx, pipeline: Pipeline, body: list, queue: str, where: str) -> tuple:
    """(record name, the statements after the read, the last one) of `body`: an
    optional reader, its read of `queue`, simple statements."""
    reader_name = None
    target, made = syntax.call_of(body[0]) if body else (None, None)
    if made is not None and syntax.qualified(ctx, made.func) in READERS:
        if not isinstance(target, cst.Name):
            raise NotThisPattern("its reader is not assigned to a name")
        reader(ctx, pipeline, made)
        reader_name = target.value
        body = body[1:]
    read_target, read = syntax.call_of(body[0]) if body else (None, None)
    record = reader_read(ctx, pipeline, read_target, read, queue, reader_name, body[1:])
    if record is None:
        raise NotThisPattern(
            other_reader(ctx, body) or f"{where} does not start with a reader's read"
        )
    *rest, last = body[1:] or [None]
    if any(not isinstance(s, cst.SimpleStatementLine) for s in [*rest, last]):
        raise NotThisPattern(f"a compound statement in {where}")
    if {queue, reader_name} & syntax.names_in(rest + [last]):
        raise NotThisPattern(f"{where} uses its queue or reader again")
    return record, rest, last


def other_reader(ctx, nodes: list) -> str:
    """Why a reader other than the converted ones under `nodes` stays, or ""."""
    found = [
        n for n, _ in syntax.served_calls(ctx, nodes) if n.endswith("Reader") and n not in READERS
    ]
    return f"{found[0]} is not converted yet" if found else ""


class ReaderChain:
    """The reader (assigned, or inline) and its read, right after the producer."""

    def recognize(self, ctx, block: list, index: int, pipeline: Pipeline):
        queue, first = pipeline.queue, index
        reader_name = None
        target, call = syntax.call_of(block[index]) if index < len(block) else (None, None)
        if call is not None and syntax.qualified(ctx, call.func) in READERS:
            if not isinstance(target, cst.Name):
                raise NotThisPattern("its reader is not assigned to a name")
            reader(ctx, pipeline, call)
            reader_name = target.value
            index += 1
        read_target, read = syntax.call_of(block[index]) if index < len(block) else (None, None)
        value = reader_read(
            ctx, pipeline, read_target, read, queue, reader_name, block[index + 1 :]
        )
        if value is None:
            other = other_reader(ctx, block[first : index + 1])
            if other:
                raise NotThisPattern(other)
            return None  # The converter says where the queue went instead.
        pipeline.params = value
        syntax.unused(queue, block[index + 1 :])
        if reader_name:
            syntax.unused(reader_name, block[index + 1 :])
        return index + 1, {value}

    def rewrite(self, p: Pipeline, n: int) -> list:
        tf, dataset = p.root, f"_dataset_{n}"
        files = p.made["string_tensor"]
        # A reader class's method: its tf.data twin reads each file.
        read = f"{TWIN.format(p.reads_by)}(f)" if p.reads_by else records(p, "f")
        lines = [f"{dataset} = {tf}.data.Dataset.from_tensor_slices({files})"]
        lines += syntax.shuffle_line(dataset, p.made, f"{tf}.size({files}, out_type={tf}.int64)")
        lines.append(f"{dataset} = {dataset}{syntax.repeat(p.made)}")
        if p.readers:
            lines.append(
                f"{dataset} = {dataset}.interleave(lambda f: {read}, cycle_length={p.readers})"
            )
        else:
            lines.append(f"{dataset} = {dataset}.flat_map(lambda f: {read})")
        if p.block:
            # read_up_to's blocks, mapped whole as legacy computed them (a block here may
            # span two files, where legacy's ended with each file: the same records).
            lines.append(f"{dataset} = {dataset}.batch({p.block})")
        if not identity(p):
            lines.append(f"{dataset} = {dataset}.map(_example_{n})")
        return lines


def records(p: Pipeline, file: str) -> str:
    """The tf.data dataset of the records the pipeline's reader reads from `file`."""
    _, passed = _PARAMETERS[p.reader]
    given = "".join(f", {k}={p.reader_args[k]}" for k in passed if k in p.reader_args)
    read = f"{p.root}.data.{READERS[p.reader]}({file}{given})"
    skip = p.reader_args.get("skip_header_lines")
    return read + (f".skip({skip})" if skip not in (None, "None", "0") else "")


def identity(p: Pipeline) -> bool:
    """Whether a reader class's method made the example, and nothing changes it after."""
    return bool(p.reads_by) and not p.example and p.params == p.returned
