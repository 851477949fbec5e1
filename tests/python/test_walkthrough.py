"""docs/PYTORCH.md's local walkthrough ("A local run of your own model, start to finish"), run as a
reader pastes it: its blocks marked ```sh walkthrough (tests/docs/code_blocks.py's walkthrough()),
in order, as one bash script, in a fresh folder whose docs/ is the clone's. Two differences, each
found exactly once in the page (a page that changes them fails here rather than running long):
fewer rounds of fewer steps (SHORTER), and the build's programs and package (PATH, PYTHONPATH:
ctest's) instead of scripts/install-python.sh's. Then what the page says to look for holds: three
overlapped peers of an external model (the LSTM example), every round committed by all three,
one state after each, the loss falling, the same final model; the tracker stopped cleanly.
Skipped where PyTorch is not installed."""

import json
import math
import os
import signal
import subprocess
import sys

import pytest

from conftest import BIN, SOURCE

pytest.importorskip("torch")

sys.path.insert(0, str(SOURCE / "tests" / "docs"))
from code_blocks import walkthrough  # noqa: E402

PAGE = SOURCE / "docs" / "PYTORCH.md"
ROUNDS, H = 3, 10
SHORTER = [("--rounds 10 ", f"--rounds {ROUNDS} "), ("diloco-h = 20\n", f"diloco-h = {H}\n")]


def shortened(script):
    for long, short in SHORTER:
        assert script.count(long) == 1, f"the walkthrough no longer has {long!r} once"
        script = script.replace(long, short)
    return script


def peer_lines(path):
    """A peer's round lines and its last line (the validation loss)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[:-1], lines[-1]


def test_the_pytorch_walkthrough_runs_and_its_peers_converge(tmp_path):
    script = shortened(walkthrough(PAGE))
    (tmp_path / "docs").symlink_to(SOURCE / "docs")
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    shell = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)  # its group: the tracker and the peers too
    try:
        out, _ = shell.communicate(timeout=300)  # a bound for a hang: it takes well under 60 s
    finally:
        try:  # whatever the script left running (it failed): its tracker, its peers
            os.killpg(shell.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    run = tmp_path / "lstm-run"
    logs = "".join(f"\n--- {p.name}:\n{p.read_text()[-2000:]}"
                   for p in sorted(run.glob("*.log")) if run.exists())
    assert shell.returncode == 0, f"the walkthrough failed:\n{out}{logs}"

    peers = [peer_lines(run / f"peer{i}.out") for i in (1, 2, 3)]
    for r in range(ROUNDS):
        rows = [rounds[r] for rounds, _ in peers]
        assert all(row["round"] == r + 1 and row["kind"] == "committed" and row["members"] == 3
                   for row in rows), rows
        assert len({row["state"] for row in rows}) == 1, f"round {r + 1}: {rows}"
    chance = math.log(64)
    for rounds, last in peers:
        assert len(rounds) == ROUNDS
        assert rounds[-1]["loss"] < rounds[0]["loss"] < chance + 0.2, rounds
        assert last["val_loss"] < chance and last["parameters"] == 139840, last
    assert len({last["val_loss"] for _, last in peers}) == 1, "the last round lands unchanged"
    # What the page shows of them: each peer's first and last round lines and its validation loss.
    assert out.count('"kind": "committed", "members": 3') == 6 and out.count("val_loss") == 3, out
