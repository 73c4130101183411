"""`compat-input migrate PATH...`: rewrite TF1 programs onto compat_input, or check them.

Every file ends changed, unchanged, skipped (no TensorFlow in it, or not Python) or failed
(a syntax error, reported as file:line:col); one bad file never stops the run. Findings
that need a person are printed as `file:line:col: severity: message`.

`--verify` runs each migrated file with plain `python` (its import), so a CI job proves
the result runs; one that does not counts as failed. With `--verify-run ARGS` it runs the
program itself, twice: the original on TensorFlow's own queues (`compat-input run
--legacy`) and the migrated copy with plain python, and compares what they print and the
first `--verify-batches` input batches (`compat-input compare`). A difference is an error
finding: at the line whose upgraded call made it (found by keeping the upgraded calls on
tf.compat.v1, half of them at a time; the file written then keeps that line's), or, when
no upgraded call explains it, at the file's first line with what differs.

Exit status: 0 when nothing would change and nothing needs a person; 1 when files
changed (or, with --check / --diff, would change) or need a person; 2 when a file failed.
"""

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys

import libcst as cst

from . import codemod
from . import tfdata

_SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "node_modules", ".tox", "build", "dist"}


def _python_files(paths: list) -> list:
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(".py"))
        else:
            files.append(path)
    return files


def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return ""  # migrate_file says why.


def _progress(index: int, total: int, path: str) -> None:
    if total < 2 or not sys.stderr.isatty():
        return
    width = 30
    done = int(width * index / total)
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {index}/{total} {path[-40:]:40s}")
    if index == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def migrate_file(path: str, write: bool, show_diff: bool, out=None, to_tfdata=False) -> tuple:
    """Returns (status, findings, outcome or None) for one file; never raises for a bad
    file."""
    out = out or sys.stdout
    if not path.endswith(".py") or not os.path.isfile(path):
        return "skipped", [], None
    try:
        with open(path, encoding="utf-8") as f:
            original = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"{path}:1:1: error: cannot read: {e}", file=out)
        return "failed", [], None
    if "tensorflow" not in original:
        return "skipped", [], None
    try:
        outcome = codemod.migrate_source(original, path, to_tfdata=to_tfdata)
    except cst.ParserSyntaxError as e:
        where = f"{path}:{e.editor_line}:{e.editor_column}"
        print(
            f"{where}: error: syntax error: {_python2(original, e.editor_line) or e.message}",
            file=out,
        )
        return "failed", [], None
    except Exception as e:  # noqa: BLE001 - one bad file must not stop a run over many.
        print(f"{path}:1:1: error: could not migrate: {type(e).__name__}: {e}", file=out)
        return "failed", [], None
    for finding in outcome.findings:
        print(finding.render(path), file=out)
    if outcome.code == original:
        return "unchanged", outcome.findings, outcome
    if show_diff:
        out.writelines(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                outcome.code.splitlines(keepends=True),
                fromfile=path,
                tofile=path,
            )
        )
    if write:
        _write(path, outcome.code)
    return "changed", outcome.findings, outcome


def _write(path: str, code: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(code)


def _copy_beside(path: str, code: str) -> str:
    """A copy of `code` beside `path`, so that the modules beside it import as they would."""
    folder, name = os.path.split(os.path.abspath(path))
    copy = os.path.join(folder, f".compat_input_verify_{name}")
    _write(copy, code)
    return copy


_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))


def verify(path: str, code: str, out=None) -> bool:
    """Imports the migrated `code` of `path` with plain `python` (its `__main__` block not
    run); True when that exits 0."""
    out = out or sys.stdout
    copy = _copy_beside(path, code)
    command = [sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", copy]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=os.path.dirname(copy), env=_ENV
        )
    finally:
        os.remove(copy)
    if done.returncode == 0:
        print(f"{path}: verified: the migrated file imports with plain python", file=out)
        return True
    last = (done.stderr.strip().splitlines() or ["(no output)"])[-1].replace(copy, path)
    print(
        f"{path}:1:1: error: the migrated file does not import "
        f"(exit status {done.returncode}): {last}",
        file=out,
    )
    return False


# The queue-fill summaries legacy batchers write, which compat_input's do not: the
# summaries a program lists differ by them (migration_guide.md, Summaries and queue sizes).
_QUEUE_SUMMARIES = r"[\w/]*fraction_of_\d+_full(, )?"


def _compare(path: str, code: str, run_args: list, batches: int, unordered: bool) -> tuple:
    """(exit status of `compat-input compare` for the original `path` on legacy queues
    against `code` with plain python, its last words)."""
    copy = _copy_beside(path, code)
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "compare"]
    command += [f"--batches={batches}", f"--ignore={_QUEUE_SUMMARIES}"]
    command += (["--unordered"] if unordered else []) + [os.path.abspath(path), copy, *run_args]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=os.path.dirname(copy), env=_ENV
        )
    finally:
        os.remove(copy)
    said = [ln for ln in done.stderr.splitlines() if ln.startswith("compat-input compare:")]
    if done.returncode == 2:
        said = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
    return done.returncode, " ".join(said).replace(copy, path)


def _repeats(path: str, run_args: list) -> bool:
    """Whether the original prints the same twice on legacy queues."""
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy"]
    runs = [
        subprocess.run(
            [*command, os.path.abspath(path), *run_args],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(path)),
            env=_ENV,
        ).stdout
        for _ in range(2)
    ]
    return runs[0] == runs[1]


def verify_run(
    path: str, outcome, run_args: list, batches: int, unordered: bool, out=None, to_tfdata=False
):
    """Runs the original on legacy queues and the migrated copy; returns ("same", "differs"
    or "failed" (a side did not run), the code to keep). Where they differ, the upgraded
    calls are kept on tf.compat.v1 half at a time to find the line whose upgrade made the
    difference."""
    out = out or sys.stdout
    with open(path, encoding="utf-8") as f:
        original = f.read()
    status, said = _compare(path, outcome.code, run_args, batches, unordered)
    if status == 0:
        print(
            f"{path}: verified: the migrated file, run with plain python, prints what the "
            f"original printed on legacy queues ({said})",
            file=out,
        )
        return "same", outcome.code
    if status != 1:
        print(f"{path}:1:1: error: a side did not run: {said}", file=out)
        return "failed", outcome.code

    def agrees(lines) -> bool:
        lines = frozenset(lines)
        code = codemod.migrate_source(original, path, to_tfdata, keep_lines=lines).code
        return _compare(path, code, run_args, batches, unordered)[0] == 0

    if not _repeats(path, run_args):
        print(
            f"{path}:1:1: error: the migrated program printed other numbers than the original, "
            "but so does the original from one run to the next on legacy queues (an unseeded "
            "random op, or several reading threads): only what repeats can be compared. Seed "
            "it, compare shuffled batches with --verify-unordered, or compare by hand with "
            "compat-input compare --tolerance / --ignore",
            file=out,
        )
        return "differs", outcome.code
    suspects = list(outcome.proven_lines)
    if not suspects or not agrees(suspects):
        print(
            f"{path}:1:1: error: the migrated program differs from the original on legacy "
            f"queues, and not by an upgraded call (each kept on tf.compat.v1, it still "
            f"differs): {said} (compat-input compare {path} MIGRATED -- ARGS shows how)",
            file=out,
        )
        return "differs", outcome.code
    while len(suspects) > 1:
        half = suspects[: len(suspects) // 2]
        suspects = half if agrees(half) else suspects[len(suspects) // 2 :]
    if not agrees(suspects):  # More than one line: keep them all.
        suspects = list(outcome.proven_lines)
    print(
        f"{path}:{suspects[0]}:1: error: the upgraded call here changes what the program "
        f"computes ({said}); the file written keeps it on tf.compat.v1, which runs the "
        "original: please report it to compat_input [CI018] (migration_guide.md#verify)",
        file=out,
    )
    kept = frozenset(suspects)
    return "differs", codemod.migrate_source(original, path, to_tfdata, keep_lines=kept).code


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="compat-input migrate",
        description="Rewrite TF1 queue-input programs onto compat_input (in place by default).",
    )
    parser.add_argument("paths", nargs="+", help="files and directories")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print a diff, write nothing")
    mode.add_argument("--check", action="store_true", help="write nothing; exit 1 if work remains")
    parser.add_argument(
        "--verify",
        action="store_true",
        help="run each migrated file's import with plain python (with --verify-run, the "
        "program, against the original on legacy queues); a failure fails the run",
    )
    parser.add_argument(
        "--to-tfdata",
        action="store_true",
        help="rewrite the input pipelines it recognizes into plain tf.data (the rest stay on "
        "compat_input); prove them with compat-input compare --batches",
    )
    parser.add_argument(
        "--verify-run",
        metavar="ARGS",
        help='with --verify: run the program with these arguments ("--steps 2"), the '
        "original on legacy queues and the migrated copy, and compare their output",
    )
    parser.add_argument(
        "--verify-batches",
        type=int,
        default=5,
        metavar="N",
        help="with --verify-run: the first N input batches are compared too (default 5)",
    )
    parser.add_argument(
        "--verify-unordered",
        action="store_true",
        help="with --verify-run: compare those batches' examples as multisets (programs "
        "that shuffle)",
    )
    args = parser.parse_args(argv)
    run_args = None if args.verify_run is None else shlex.split(args.verify_run)
    write = not (args.diff or args.check)
    files = _python_files(args.paths)
    # The program's reader classes may sit in another of its modules (tfdata.Project).
    to_tfdata = tfdata.Project.scan([_text(f) for f in files]) if args.to_tfdata else False
    counts = {"changed": 0, "unchanged": 0, "skipped": 0, "failed": 0}
    needs_person = 0
    # A file verified by running it is written after the run: the original runs first.
    comparing = args.verify and run_args is not None
    for index, path in enumerate(files, 1):
        status, findings, outcome = migrate_file(
            path, write=write and not comparing, show_diff=args.diff, to_tfdata=to_tfdata
        )
        if args.verify and not comparing and outcome is not None:
            if not verify(path, outcome.code):
                status = "failed"
        elif comparing and outcome is not None:
            verdict, code = verify_run(
                path,
                outcome,
                run_args,
                args.verify_batches,
                args.verify_unordered,
                to_tfdata=to_tfdata,
            )
            needs_person += verdict == "differs"
            status = "failed" if verdict == "failed" else status
            if write and status == "changed":
                _write(path, code)
        counts[status] += 1
        needs_person += status == "failed"  # A file left as it was needs a person most.
        needs_person += sum(1 for f in findings if f.flag.severity in ("warning", "error"))
        _progress(index, len(files), path)
    verb = "changed" if write else "would change"
    print(
        f"compat-input migrate: {counts['changed']} {verb}, {counts['unchanged']} unchanged, "
        f"{counts['skipped']} skipped, {counts['failed']} failed; "
        f"{needs_person} findings need a person",
        file=sys.stderr,
    )
    if counts["failed"]:
        return 2
    return 1 if counts["changed"] or needs_person else 0


# Python 2 statements that 2016-2017 TF1 course code still has (CS20SI's `print features`).
_PYTHON2 = re.compile(r"^\s*(print\s+[^\s(=]|exec\s+[^\s(=])|^\s*except\s+[\w.]+\s*,\s*\w+\s*:")


def _python2(source: str, line: int):
    """What to do with a file whose syntax error at `line` is Python 2's, or None."""
    lines = source.splitlines()
    # libcst may place the error at the start of the line after the statement.
    found = [t for t in lines[max(0, line - 2) : line] if _PYTHON2.search(t)]
    if found:
        return (
            f"Python 2 syntax ({found[-1].strip()!r}): compat-input migrates Python 3 "
            "code; convert the file first (2to3 -w FILE, from Python 3.12 or older, or by "
            "hand) and migrate it again"
        )
    return None


if __name__ == "__main__":
    sys.exit(main())
