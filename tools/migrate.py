"""`compat-input migrate PATH...`: rewrite TF1 programs onto compat_input, or check them.

Every file ends changed, unchanged, skipped (no TensorFlow in it, or not Python) or failed
(a syntax error, reported as file:line:col); one bad file never stops the run. Findings
that need a person are printed as `file:line:col: severity: message`.

`--verify` runs each migrated file with plain `python` (its import; with `--verify-run
ARGS`, the program itself), so a CI job proves the result runs; one that does not counts
as failed.

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
    """Returns (status, findings, migrated text or None) for one file; never raises for a
    bad file."""
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
        return "unchanged", outcome.findings, outcome.code
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
        with open(path, "w", encoding="utf-8") as f:
            f.write(outcome.code)
    return "changed", outcome.findings, outcome.code


def verify(path: str, code: str, run_args, out=None) -> bool:
    """Runs the migrated `code` of `path` with plain `python`, as a module import (its
    `__main__` block not run) or, with `run_args` (a list), as the program itself; True
    when it exits 0. A copy beside `path` runs where `path` was not rewritten in place,
    so that the modules beside it import as they would."""
    out = out or sys.stdout
    folder, name = os.path.split(os.path.abspath(path))
    copy = os.path.join(folder, f".compat_input_verify_{name}")
    with open(copy, "w", encoding="utf-8") as f:
        f.write(code)
    if run_args is None:
        command = [sys.executable, "-c", "import runpy, sys; runpy.run_path(sys.argv[1])", copy]
        what = "imports"
    else:
        command = [sys.executable, copy, *run_args]
        what = "runs"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"))
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=folder, env=env)
    finally:
        os.remove(copy)
    if done.returncode == 0:
        print(f"{path}: verified: the migrated file {what} with plain python", file=out)
        return True
    last = (done.stderr.strip().splitlines() or ["(no output)"])[-1].replace(copy, path)
    print(
        f"{path}:1:1: error: the migrated file does not {what[:-1]} "
        f"(exit status {done.returncode}): {last}",
        file=out,
    )
    return False


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
        help="run each migrated file's import with plain python; a failure fails the run",
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
        help='with --verify: run the program itself with these arguments ("--steps 2")',
    )
    args = parser.parse_args(argv)
    run_args = None if args.verify_run is None else shlex.split(args.verify_run)
    write = not (args.diff or args.check)
    files = _python_files(args.paths)
    counts = {"changed": 0, "unchanged": 0, "skipped": 0, "failed": 0}
    needs_person = 0
    for index, path in enumerate(files, 1):
        status, findings, migrated = migrate_file(
            path, write=write, show_diff=args.diff, to_tfdata=args.to_tfdata
        )
        if args.verify and migrated is not None and not verify(path, migrated, run_args):
            status = "failed"
        counts[status] += 1
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
