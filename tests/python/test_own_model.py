"""A run of the trainer's own model (docs/PYTORCH.md, "Your own model"): a 2-layer LSTM's genesis
file written by loco.write_genesis names the run's model ([model] kind = "external"), 3 PyTorch
peers train it with DiLoCo, Streaming DiLoCo (balanced fragments) and eager updates, one state
after every round, and the loss falls. A peer whose genesis file differs is refused, naming the
setting. Skipped where PyTorch is not installed."""

import json
import signal
import subprocess
import sys

import pytest

from conftest import (BIN, HERE, Tracker, python_lines, python_rounds, read_line,
                      same_state_after_every_round)

torch = pytest.importorskip("torch")

import loco  # noqa: E402
from own_model_peer import Model  # noqa: E402

DILOCO = 'kind = "diloco"\ndiloco-h = 10\nouter-lr = 0.7\nouter-momentum = 0.9\ntracker-paced = false\n'
STREAMING = ('kind = "streaming"\ndiloco-h = 10\nfragments = 2\ntau = 2\nlayout = "balanced"\n'
             'fragment-codec = "fp4:block=64"\n')
EAGER = 'kind = "streaming"\ndiloco-h = 10\nfragments = 1\nlayout = "balanced"\neager = "delayed"\n'
OVERLAPPED = EAGER.replace('"delayed"', '"overlapped"')


def genesis(folder, name, seed):
    """The LSTM's genesis file `name`.safetensors, from torch's seed `seed`; the config lines."""
    torch.manual_seed(seed)
    return loco.write_genesis(Model(), folder / f"{name}.safetensors")


def run_config(folder, name, lines, strategy, rounds):
    path = folder / f"{name}.toml"
    path.write_text(lines + f"[train]\nsteps = {10 * rounds}\n[strategy]\n{strategy}")
    return path


def test_write_genesis_names_the_module_in_order_and_prints_the_lines(tmp_path, capsys):
    lines = genesis(tmp_path, "g", seed=1)
    assert capsys.readouterr().out == lines
    assert 'kind = "external"' in lines and 'genesis = "g.safetensors"' in lines
    assert lines == genesis(tmp_path, "again", seed=1).replace("again", "g"), "deterministic"
    config = run_config(tmp_path, "run", lines, DILOCO, 1)
    tracker = Tracker(tmp_path, config, "own-names", min_peers=1)
    try:
        with loco.Peer(tracker.peer_config(tmp_path, "p")) as peer:
            assert peer.tensors() == [(name, tuple(p.shape))
                                      for name, p in Model().named_parameters()]
    finally:
        assert tracker.stop() == 0


@pytest.mark.parametrize("strategy, rounds",
                         [(DILOCO, 4), (STREAMING, 6), (EAGER, 4), (OVERLAPPED, 4)],
                         ids=["diloco", "streaming", "eager-delayed", "eager-overlapped"])
def test_three_pytorch_peers_of_an_lstm_hold_one_state_and_learn(tmp_path, spawn, strategy,
                                                                rounds):
    config = run_config(tmp_path, "run", genesis(tmp_path, "genesis", seed=0), strategy,
                        rounds + 2)
    tracker = Tracker(tmp_path, config, "own-run", min_peers=3)
    try:
        peers = [spawn([sys.executable, HERE / "own_model_peer.py",
                        tracker.peer_config(tmp_path, f"py-{i}"), rounds, i]) for i in range(3)]
        runs = [python_rounds(p, timeout=240) for p in peers]
        same_state_after_every_round(runs, rounds)
        for run in runs:  # from chance (ln 8 = 2.08) to well below: the rule is learned
            assert run[-1]["loss"] < 0.7 * run[-1]["first_loss"], f"the loss did not fall: {run}"
    finally:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"


def test_a_peer_of_another_genesis_is_refused_naming_the_setting(tmp_path):
    config = run_config(tmp_path, "run", genesis(tmp_path, "genesis", seed=0), DILOCO, 2)
    tracker = Tracker(tmp_path, config, "own-refused", min_peers=2)
    try:
        # Another model's file and hash: the tracker refuses the peer by the setting.
        other = run_config(tmp_path, "other", genesis(tmp_path, "other", seed=1), DILOCO, 2)
        path = tracker.peer_config(tmp_path, "o")
        path.write_text(path.read_text().replace(str(config), str(other)))
        with loco.Peer(path) as peer:
            for name, p in Model().named_parameters():
                peer.bind(name, p.detach().clone())
            with pytest.raises(loco.Error) as refused:
                peer.join(timeout=20)
        assert refused.value.status == "LOCO_ERR_CONFIG", refused.value
        assert "model.genesis-blake2b" in refused.value.message
        # The run's hash, another file's bytes: refused at open, before a word to the tracker.
        data = bytearray((tmp_path / "genesis.safetensors").read_bytes())
        data[-1] ^= 1
        (tmp_path / "tampered.safetensors").write_bytes(bytes(data))
        tampered = tmp_path / "tampered.toml"
        tampered.write_text(config.read_text().replace('"genesis.safetensors"',
                                                       '"tampered.safetensors"'))
        path.write_text(path.read_text().replace(str(other), str(tampered)))
        with pytest.raises(loco.Error) as changed:
            loco.Peer(path)
        assert changed.value.status == "LOCO_ERR_CONFIG"
        assert "model.genesis-blake2b" in changed.value.message
        # loco-peer's own trainer cannot train it, and says who can.
        own = subprocess.run([str(BIN / "loco-peer"), "--config", str(tracker.peer_config(
            tmp_path, "l"))], capture_output=True, text=True, timeout=60)
        assert own.returncode != 0
        assert "an external model needs a trainer peer" in own.stderr, own.stderr
    finally:
        assert tracker.stop() == 0


def test_a_peer_killed_and_restarted_rejoins_from_the_runs_state(tmp_path, spawn):
    """Two peers train on; the third is SIGKILLed after its first round and a new process of it
    (a new key: the old one is evicted in its time) joins, fetches the run's state and commits
    rounds with the others, one state each round."""
    config = run_config(tmp_path, "run", genesis(tmp_path, "genesis", seed=0), DILOCO, 1000)
    tracker = Tracker(tmp_path, config, "own-restart", min_peers=2)

    def peer(name, rounds):
        return spawn([sys.executable, HERE / "own_model_peer.py",
                      tracker.peer_config(tmp_path, name), rounds, len(name)])

    def rows(process):  # its lines so far (a process killed or still running)
        return [json.loads(line) for line in process.stdout.read().splitlines()]

    try:
        survivors = [peer(f"py-{i}", 1000) for i in range(2)]
        victim = peer("victim", 1000)
        line = ""
        while '"committed"' not in line:
            line = read_line(victim.stdout, timeout=120)
            assert line, "the victim committed no round"
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(timeout=30) == -signal.SIGKILL
        restarted = peer("restarted", 3)
        back = python_lines(restarted, timeout=240)
        for survivor in survivors:
            survivor.send_signal(signal.SIGTERM)
            survivor.wait(timeout=30)
        joined = back[0]
        assert joined["event"] == "joined" and joined["fetched"] and joined["round"] >= 1, joined
        states = [{row["round"]: row["state"] for row in rows(p) if row.get("kind") == "committed"}
                  for p in survivors]
        # Its first round may be one the others formed without it (its join landed while that
        # round was in flight, or it was not ready within the tracker's join timeout): it sits
        # that round out and fetches the state it made ("replaced"). Every row holds the run's
        # state of its round, and the rounds after the first are its own.
        assert back[1]["kind"] in ("committed", "replaced"), back
        for row in back[2:]:
            assert row["kind"] == "committed", back
        for row in back[1:]:
            assert all(s.get(row["round"]) == row["state"] for s in states), (row, states)
    finally:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"
