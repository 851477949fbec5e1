"""Fixtures of the Python package's tests: a real loco-tracker on loopback and peer configs.

ctest runs these with LOCO_BIN_DIR (loco-tracker, loco-peer), LOCO_SOURCE_DIR and PYTHONPATH
(the built package) set (tests/python/CMakeLists.txt).
"""

import json
import os
import re
import selectors
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

BIN = Path(os.environ["LOCO_BIN_DIR"])
SOURCE = Path(os.environ["LOCO_SOURCE_DIR"])
HERE = Path(__file__).resolve().parent


def run_config(folder, h=None, rounds=None, data=None, streaming=None, strategy=None):
    """configs/swarm-tiny.toml as the run's config file, with H (strategy.diloco-h), the steps
    (H × rounds: loco-peer's) and the [data] section's lines replaced when given; `streaming`:
    the [strategy] lines of a Streaming DiLoCo run (kind = "streaming" and these), if given;
    `strategy`: the lines of a [strategy] section that replaces the file's (kind and options,
    diloco-h = H added), if given."""
    text = (SOURCE / "configs" / "swarm-tiny.toml").read_text()
    h_line = "diloco-h = 20 "
    assert h_line in text and "steps = 300\n" in text
    if h is not None:
        text = text.replace(h_line, f"diloco-h = {h} ", 1)
    if rounds is not None:
        text = text.replace("steps = 300\n", f"steps = {(h or 20) * rounds}\n", 1)
    if data is not None:
        start = text.index("[data]\n") + len("[data]\n")
        text = text[:start] + data + text[text.index("\n[", start):]
    if streaming is not None:
        # Appended lines belong to [strategy]: it must be the file's last section.
        assert text.rindex("\n[") == text.index("\n[strategy]") and 'kind = "diloco"' in text
        text = text.replace('kind = "diloco"', 'kind = "streaming"') + streaming
    if strategy is not None:  # [strategy] is the file's last section
        text = text[:text.index("\n[strategy]\n") + 1] + \
            f"[strategy]\ndiloco-h = {h or 20}\n" + strategy
    path = folder / "run.toml"
    path.write_text(text)
    return path


class Tracker:
    """loco-tracker for run `run_id`, its address and key taken from its first line."""

    def __init__(self, folder, config, run_id, min_peers, http=False, options=()):
        import loco

        loco.keygen(folder / "tracker.key")
        self.log = folder / "tracker.log"
        self.process = subprocess.Popen(
            [str(BIN / "loco-tracker"), "--tracker.key", str(folder / "tracker.key"),
             "--tracker.listen", "127.0.0.1:0", "--tracker.state-file", str(folder / "tracker.state"),
             "--tracker.http", "127.0.0.1:0" if http else "",
             "--tracker.max-members-per-address", "0", "--run.id", run_id,
             "--run.config", str(config), "--run.min-peers", str(min_peers),
             "--admission.policy", "open", *options],
            stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True)
        line = read_line(self.process.stdout, timeout=30)
        prefix = "listening on "
        if not line.startswith(prefix) or " as " not in line:
            self.stop()
            last = (self.log.read_text().strip().splitlines() or [""])[-1]
            raise RuntimeError(f"loco-tracker did not start: {last}; its log: {self.log}")
        self.address, self.public_key = line[len(prefix):].strip().split(" as ")
        self.run_id = run_id
        self.config = config
        self.public_keys = {}  # peer name -> its public key (hex), as the status page shows it
        self.status_url = None
        if http:  # the status page's address: its line comes soon after "listening on"
            found = wait_for(lambda: re.search(r"status page at (http://\S+/)",
                                               self.log.read_text()), timeout=30)
            assert found, f"loco-tracker named no status page; its log: {self.log}"
            self.status_url = found.group(1) + "status"

    def peer_config(self, folder, name, link=None):
        """A loco-peer config for a new key `name`.key, written as `name`.toml; `link`: the
        [link] section's lines (the peer's emulated link), if any."""
        import loco

        self.public_keys[name] = loco.keygen(folder / f"{name}.key")
        path = folder / f"{name}.toml"
        path.write_text(
            'log-level = "info"\n'
            f'[peer]\nkey = "{name}.key"\nlisten = "127.0.0.1:0"\n'
            f'[run]\nid = "{self.run_id}"\nconfig = "{self.config}"\n'
            f'[tracker]\naddress = "{self.address}"\npublic-key = "{self.public_key}"\n'
            + (f'[link]\n{link}' if link else ''))
        return path

    def status(self):
        """The tracker's /status JSON (a tracker made with http=True)."""
        with urllib.request.urlopen(self.status_url, timeout=10) as reply:
            return json.loads(reply.read())

    def stop(self):
        self.process.terminate()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def wait_for(predicate, timeout, every=0.05):
    """The first true value of predicate(), polled every `every` seconds, or None once `timeout`
    seconds have passed without one: a wait on an event, its timeout only a bound for a hang."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)


def read_line(stream, timeout):
    """One line of `stream`, or "" when none comes within `timeout` seconds."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    ready = selector.select(timeout)
    selector.close()
    return stream.readline() if ready else ""


@pytest.fixture
def tracker_factory(tmp_path):
    trackers = []

    def make(min_peers, h=None, rounds=None, data=None, run_id="py-run", http=False,
             streaming=None, options=(), strategy=None):
        tracker = Tracker(tmp_path, run_config(tmp_path, h, rounds, data, streaming, strategy),
                          run_id, min_peers, http, options)
        trackers.append(tracker)
        return tracker

    yield make
    for tracker in trackers:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"


@pytest.fixture
def spawn(tmp_path):
    """Starts a process (stdout piped, stderr written to `process.log`, process-N.log in the
    test's folder, where it stays for a failure's diagnosis); whatever still runs at the test's
    end (a failed assertion) is killed, so that a peer that failed does not leave the others
    waiting for it."""
    processes = []

    def start(argv):
        log = tmp_path / f"process-{len(processes)}.log"
        with open(log, "w") as stderr:
            process = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE,
                                       stderr=stderr, text=True)
        process.log = log
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def python_peer(spawn, config, rounds, seed, *options):
    """tests/python/quadratic_peer.py as its own process (`options`: its --save, --load...)."""
    return spawn([sys.executable, HERE / "quadratic_peer.py", config, rounds, seed, *options])


def python_lines(process, timeout=120):
    """Every JSON line a Python peer printed, once it has ended well."""
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, \
        f"a Python peer failed ({process.returncode}):\n{process.log.read_text()}"
    return [json.loads(line) for line in out.splitlines()]


def python_rounds(process, timeout=120):
    """A Python peer's rounds, one dict per round line it printed: round, kind, members, state
    (the full hash), loss (its other lines, "event"s, left out)."""
    return [row for row in python_lines(process, timeout) if "event" not in row]


def loco_peer_rounds(process, timeout=120):
    """A loco-peer's rounds from its lines "round R KIND members M loss L state H"
    (peer/swarm_peer.hpp), as python_rounds gives them (state: H, the first 16 hex digits)."""
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, \
        f"loco-peer failed ({process.returncode}):\n{process.log.read_text()}"
    rows = []
    for line in out.splitlines():
        w = line.split()
        if w[:1] == ["round"]:
            rows.append({"round": int(w[1]), "kind": w[2], "members": int(w[4]),
                         "loss": float(w[6]), "state": w[8]})
    return rows


def same_state_after_every_round(runs, rounds):
    """Every peer's every round committed with all of them, and one state after each (a
    loco-peer prints 16 hex digits of it)."""
    assert all(len(run) == rounds for run in runs), runs
    for r in range(rounds):
        rows = [run[r] for run in runs]
        assert all(row["round"] == r + 1 and row["kind"] == "committed" and
                   row["members"] == len(runs) for row in rows), rows
        assert len({row["state"][:16] for row in rows}) == 1, f"round {r + 1}: {rows}"
