"""The own-model example (docs/examples/pytorch/train_lstm.py: a 2-layer LSTM language model whose
genesis file names the run's model) as docs/PYTORCH.md and bench/run.sh torch-peers MODEL=own run
it: its genesis written by the script, two peers of it on loco-prepare's token files, one
overlapping its rounds and one blocking in them, one state after every round and the loss falls.
Skipped where PyTorch is not installed."""

import subprocess
import sys

import pytest

from conftest import BIN, SOURCE, Tracker, python_rounds, same_state_after_every_round

pytest.importorskip("torch")

EXAMPLE = SOURCE / "docs" / "examples" / "pytorch" / "train_lstm.py"


def test_two_peers_of_the_lstm_example_hold_one_state_and_learn(tmp_path, spawn):
    rounds = 3
    subprocess.run([BIN / "loco-prepare", "--log-level", "warn", "--source", "markov",
                    "--markov.vocab", "64", "--markov.train-tokens", "100000",
                    "--markov.val-tokens", "10000", "--train-out", tmp_path / "train.bin",
                    "--val-out", tmp_path / "val.bin"], check=True, capture_output=True, timeout=60)
    genesis = subprocess.run([sys.executable, EXAMPLE, "--write-genesis", "genesis.safetensors"],
                             cwd=tmp_path, check=True, capture_output=True, text=True, timeout=60)
    assert 'kind = "external"' in genesis.stdout, genesis.stdout
    config = tmp_path / "run.toml"
    config.write_text(genesis.stdout + f"[train]\nsteps = {10 * rounds}\n[strategy]\n"
                      'kind = "diloco"\ndiloco-h = 10\nouter-lr = 0.7\nouter-momentum = 0.9\n'
                      'tracker-paced = false\n')
    tracker = Tracker(tmp_path, config, "lstm-example", min_peers=2)
    try:
        peers = [spawn([sys.executable, EXAMPLE, "--config", tracker.peer_config(tmp_path, f"p{i}"),
                        "--train", tmp_path / "train.bin", "--rounds", rounds, "--seed", i]
                       + (["--overlap"] if i == 1 else [])) for i in range(2)]
        runs = [python_rounds(p, timeout=180) for p in peers]
        same_state_after_every_round(runs, rounds)
        for run in runs:
            assert run[-1]["loss"] < run[0]["loss"], f"the loss did not fall: {run}"
    finally:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"
