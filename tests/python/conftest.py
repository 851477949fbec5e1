"""Fixtures of the Python package's tests: a real loco-tracker on loopback and peer configs.

ctest runs these with LOCO_BIN_DIR (loco-tracker, loco-peer), LOCO_SOURCE_DIR and PYTHONPATH
(the built package) set (tests/python/CMakeLists.txt).
"""

import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(os.environ["LOCO_BIN_DIR"])
SOURCE = Path(os.environ["LOCO_SOURCE_DIR"])
HERE = Path(__file__).resolve().parent


def run_config(folder, steps=None):
    """configs/swarm-tiny.toml, with train.steps replaced when given: the run's config file."""
    text = (SOURCE / "configs" / "swarm-tiny.toml").read_text()
    if steps is not None:
        text = text.replace("steps = 300\n", f"steps = {steps}\n", 1)
    path = folder / "run.toml"
    path.write_text(text)
    return path


class Tracker:
    """loco-tracker for run `run_id`, its address and key taken from its first line."""

    def __init__(self, folder, config, run_id, min_peers):
        import loco

        loco.keygen(folder / "tracker.key")
        self.log = folder / "tracker.log"
        self.process = subprocess.Popen(
            [str(BIN / "loco-tracker"), "--tracker.key", str(folder / "tracker.key"),
             "--tracker.listen", "127.0.0.1:0", "--tracker.state-file", str(folder / "tracker.state"),
             "--tracker.http", "", "--tracker.max-members-per-address", "0", "--run.id", run_id,
             "--run.config", str(config), "--run.min-peers", str(min_peers),
             "--admission.policy", "open"],
            stdout=subprocess.PIPE, stderr=open(self.log, "w"), text=True)
        line = read_line(self.process.stdout, timeout=30)
        prefix = "listening on "
        if not line.startswith(prefix) or " as " not in line:
            self.stop()
            raise RuntimeError(f"loco-tracker did not start: {line!r}; its log: {self.log}")
        self.address, self.public_key = line[len(prefix):].strip().split(" as ")
        self.run_id = run_id
        self.config = config

    def peer_config(self, folder, name):
        """A loco-peer config for a new key `name`.key, written as `name`.toml."""
        import loco

        loco.keygen(folder / f"{name}.key")
        path = folder / f"{name}.toml"
        path.write_text(
            'log-level = "warn"\n'
            f'[peer]\nkey = "{name}.key"\nlisten = "127.0.0.1:0"\n'
            f'[run]\nid = "{self.run_id}"\nconfig = "{self.config}"\n'
            f'[tracker]\naddress = "{self.address}"\npublic-key = "{self.public_key}"\n')
        return path

    def stop(self):
        self.process.terminate()
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


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

    def make(min_peers, steps=None, run_id="py-run"):
        tracker = Tracker(tmp_path, run_config(tmp_path, steps), run_id, min_peers)
        trackers.append(tracker)
        return tracker

    yield make
    for tracker in trackers:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"


def start_python_peer(config, rounds, seed):
    """tests/python/quadratic_peer.py as its own process: one JSON line per round on stdout."""
    return subprocess.Popen([sys.executable, str(HERE / "quadratic_peer.py"), str(config),
                             str(rounds), str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
