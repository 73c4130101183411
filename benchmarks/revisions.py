"""The cost of a change: the same benchmark programs on compat_input at two git revisions.

Each revision is checked out in a temporary git worktree; every program of benchmarks/programs
named by `--only` runs through `compat-input run` (TF1 behaviour, as users run it) from each
revision's own tree, the revisions interleaved run by run (drift hits both alike). Each
figure is the median of `--repeats` runs of steady steps per second; the ratio is NEW / OLD.
Results go to stdout and, with `--out`, to a markdown file.

    python benchmarks/revisions.py OLD NEW [--only step,csv] [--repeats 9] [--steps 500]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import run as benchmarks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _worktree(revision: str, into: str) -> str:
    path = os.path.join(into, revision.replace("/", "_"))
    subprocess.run(
        ["git", "-C", ROOT, "worktree", "add", "--detach", "-f", path, revision],
        check=True,
        capture_output=True,
    )
    return path


def _steps_per_second(tree: str, program: str, data_dir: str, steps: int) -> float:
    programs = os.path.join(tree, "benchmarks", "programs")
    env = dict(os.environ, PYTHONPATH=tree, TF_CPP_MIN_LOG_LEVEL="2")
    run = subprocess.run(
        [sys.executable, "-m", "compat_input._src.commands.cli", "run"]
        + [os.path.join(programs, f"{program}_queues.py"), data_dir, str(steps)],
        capture_output=True,
        text=True,
        env=env,
        cwd=programs,
        timeout=600,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{program} at {tree} failed:\n{run.stderr[-3000:]}")
    return json.loads(lines[-1])["steps_per_s"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--only", default="step,csv")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--out")
    parser.add_argument("--data", help="a data directory benchmarks/run.py made (else made)")
    args = parser.parse_args()
    programs = args.only.split(",")
    with tempfile.TemporaryDirectory(prefix="compat_input_revisions_") as scratch:
        trees = {r: _worktree(r, scratch) for r in (args.old, args.new)}
        data_dir = args.data
        if data_dir is None:
            data_dir = os.path.join(scratch, "data")
            os.makedirs(data_dir)
            benchmarks.make_data(data_dir)
        rates: dict = {}
        try:
            for _ in range(args.repeats):
                for program in programs:
                    for revision, tree in trees.items():
                        rate = _steps_per_second(tree, program, data_dir, args.steps)
                        rates.setdefault((program, revision), []).append(rate)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", tree])
    lines = [
        f"Steady steps/s through `compat-input run` (TF1 behaviour), medians of {args.repeats}, "
        f"{args.steps} steps, revisions interleaved.",
        "",
        f"| program | {args.old} | {args.new} | ratio |",
        "|---|---|---|---|",
    ]
    for program in programs:
        old = statistics.median(rates[(program, args.old)])
        new = statistics.median(rates[(program, args.new)])
        lines.append(f"| {program} | {old:,.0f} | {new:,.0f} | {new / old:.3f} |")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
