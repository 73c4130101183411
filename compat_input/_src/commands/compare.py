"""`compat-input compare`: one program run two ways, what it prints compared, for CI.

    compat-input compare SCRIPT [ARGS...]          # legacy queues vs compat_input
    compat-input compare ORIGINAL MIGRATED [ARGS...]  # original on legacy vs migrated copy

Each side runs in a process of its own with the same environment and `PYTHONHASHSEED`:
SCRIPT through `compat-input run --legacy` and `compat-input run`; or ORIGINAL through
`compat-input run --legacy` and MIGRATED with plain `python`. Their standard outputs are
compared line by line, after removing what `--ignore REGEX` matches (timings, paths);
with `--tolerance`, numbers in a line may differ by that much (relative or absolute).
`--batches N` also compares the first N input batches each side reads (fingerprints of
every component, batch_records.py): for programs whose input order is fixed
(`shuffle=False`, or seeded and one thread). With `--unordered`, the examples of those
batches are compared as a multiset instead (every component of an example together), for
programs that shuffle: choose N to cover whole epochs, or run to the end of a finite input
with a large N. Exit status: 0 same, 1 different (a diff is
printed), 2 a side failed to run (its exit status and the end of its stderr are printed).
"""

import argparse
import collections
import difflib
import math
import os
import re
import subprocess
import sys
import tempfile

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b")


def _same_line(a: str, b: str, tolerance: float) -> bool:
    if a == b:
        return True
    if not tolerance or _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
        if not math.isclose(float(x), float(y), rel_tol=tolerance, abs_tol=tolerance):
            if not (math.isnan(float(x)) and math.isnan(float(y))):
                return False
    return True


def _lines(output: str, ignore: list) -> list:
    for pattern in ignore:
        output = re.sub(pattern, "", output)
    return output.splitlines()


def _run(command: list, env: dict, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)


def compare(argv: list) -> int:
    parser = argparse.ArgumentParser(
        prog="compat-input compare",
        description="Run a TF1 program on legacy queues and through compat_input (or an "
        "original against its migrated copy) and compare what they print.",
    )
    parser.add_argument("--tolerance", type=float, default=0.0, help="for numbers in lines")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per side")
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="REGEX",
        help="removed from every line before comparing (timings, paths); repeatable",
    )
    parser.add_argument(
        "--batches",
        type=int,
        default=0,
        metavar="N",
        help="also compare the first N input batches read (programs with a fixed input order)",
    )
    parser.add_argument(
        "--unordered",
        action="store_true",
        help="with --batches: compare the examples of the first N batches as multisets "
        "(programs that shuffle)",
    )
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as records:
        return _compare(ns, records if ns.batches > 0 else None)


# Plain `python MIGRATED ARGS`, with only the batch recorder installed. As plain python
# does, the script's folder comes first on the path: its own modules (a migrated
# cifar10_input.py beside a migrated cifar10_train.py) are the ones imported.
_PLAIN = (
    "import os, runpy, sys; import compat_input; "
    "compat_input.install(record_batches=sys.argv.pop(1), serve=False); "
    "sys.argv = sys.argv[1:]; sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0])); "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _multiset_difference(paths: list, count: int) -> tuple:
    """(how the examples of the first `count` batches differ as multisets, or ''; how
    many batches were compared)."""
    from compat_input._src.commands import batch_records  # TensorFlow: only when asked.

    sides = []
    for path in paths:
        lines = open(batch_records.examples_path(path)).read().splitlines()[:count]
        sides.append((len(lines), collections.Counter(" ".join(lines).split())))
    (read_a, a), (read_b, b) = sides
    if read_a != read_b:
        return f"the first side read {read_a} batches, the second {read_b}", min(read_a, read_b)
    if a != b:
        return (
            f"the examples of the first {read_a} batches differ: {sum((a - b).values())} only "
            f"on the first side, {sum((b - a).values())} only on the second",
            read_a,
        )
    return "", read_a


def _first_difference(paths: list, count: int) -> tuple:
    """(what differs in the first `count` batch lines of the two files, or '';
    how many batches were compared)."""
    first, second = ([ln.split(" ", 1) for ln in open(p).read().splitlines()] for p in paths)
    for index in range(count):
        a = first[index] if index < len(first) else None
        b = second[index] if index < len(second) else None
        if a is None and b is None:
            return "", index
        if a is None or b is None:
            side = "first" if a is None else "second"
            return f"batch {index}: the {side} side read only {index} batches", index
        if a != b:
            return f"batch {index} differs (shapes {a[1]} and {b[1]})", index
    return "", count


def _compare(ns: argparse.Namespace, records) -> int:
    env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    run = [sys.executable, "-m", "compat_input._src.commands.cli", "run"]
    args, migrated = list(ns.args), None
    if args and args[0] == "--":  # What follows is the program's, even a .py file.
        args = args[1:]
    elif args and args[0].endswith(".py") and os.path.isfile(args[0]):
        migrated, args = args[0], args[1:]
    paths = [os.path.join(records, f"side{i}.txt") for i in (0, 1)] if records else []
    record = [[f"--record-batches={p}"] for p in paths] or [[], []]
    sides = {f"{ns.script} on legacy queues": [*run, "--legacy", *record[0], ns.script, *args]}
    if migrated and records:
        plain = [sys.executable, "-c", _PLAIN, paths[1], migrated, *args]
        sides[f"{migrated} (plain python)"] = plain
    elif migrated:
        sides[f"{migrated} (plain python)"] = [sys.executable, migrated, *args]
    else:
        sides[f"{ns.script} through compat_input"] = [*run, *record[1], ns.script, *args]
    done = {}
    for name, command in sides.items():
        try:
            done[name] = _run(command, env, ns.timeout)
        except subprocess.TimeoutExpired:
            print(f"compat-input compare: {name} ran past {ns.timeout:.0f} s", file=sys.stderr)
            return 2
    for name, result in done.items():
        if result.returncode != 0:
            print(
                f"compat-input compare: {name} exited with status {result.returncode}:\n"
                + result.stderr[-3000:],
                file=sys.stderr,
            )
            return 2
    (first, a), (second, b) = done.items()
    lines_a, lines_b = (_lines(r.stdout, ns.ignore) for r in (a, b))
    differ = _multiset_difference if ns.unordered else _first_difference
    batches, compared = differ(paths, ns.batches) if records else ("", 0)
    if batches:
        print(f"compat-input compare: the input differs: {batches}", file=sys.stderr)
    if len(lines_a) == len(lines_b) and all(
        _same_line(x, y, ns.tolerance) for x, y in zip(lines_a, lines_b)
    ):
        read = ""
        if records and not batches:
            read = (
                (
                    f", the examples of the first {compared} input batches the same multiset"
                    if ns.unordered
                    else f", same first {compared} input batches"
                )
                if compared
                else ", no batcher's batch read"
            )
        print(f"compat-input compare: same output ({len(lines_a)} lines{read})", file=sys.stderr)
        return 1 if batches else 0
    sys.stdout.writelines(
        difflib.unified_diff(
            [line + "\n" for line in lines_a],
            [line + "\n" for line in lines_b],
            fromfile=first,
            tofile=second,
        )
    )
    print("compat-input compare: outputs differ", file=sys.stderr)
    return 1
