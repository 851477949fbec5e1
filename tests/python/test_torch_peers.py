"""PyTorch peers (docs/examples/pytorch/train_gpt.py: a nanoGPT-style GPT, AdamW, loco's DiLoCo)
and loco-peer peers training the same GPT on the same token files in one run, DiLoCo, Streaming
DiLoCo or SparseLoCo. Skipped where PyTorch is not installed."""

import sys

import pytest

from conftest import BIN, SOURCE, loco_peer_rounds, python_rounds, same_state_after_every_round

pytest.importorskip("torch")

EXAMPLE = SOURCE / "docs" / "examples" / "pytorch" / "train_gpt.py"


# A Streaming DiLoCo run (test_streaming.py's): --rounds 2 × H steps land 3 fragment rounds.
STREAMING = 'fragments = 2\ntau = 2\nalpha = 0.5\nfragment-codec = "fp4:block=64"\n'
# A SparseLoCo run: 16 of every 256 values of each member's error feedback sent, in 2 bits.
SPARSELOCO = 'kind = "sparseloco"\nsparseloco-chunk = 256\nsparseloco-topk = 16\n'


@pytest.mark.parametrize("kind", ["diloco", "streaming", "sparseloco"])
def test_two_loco_peers_and_two_pytorch_peers_hold_the_same_state(tracker_factory, tmp_path,
                                                                   spawn, kind):
    streaming = kind == "streaming"
    rounds = 3  # landed by every peer: DiLoCo rounds, or fragment rounds of 2 × H steps
    prepare = spawn([BIN / "loco-prepare", "--log-level", "warn", "--source", "markov",
                     "--markov.vocab", "64", "--markov.train-tokens", "200000",
                     "--markov.val-tokens", "20000", "--train-out", tmp_path / "train.bin",
                     "--val-out", tmp_path / "val.bin"])
    assert prepare.wait(timeout=60) == 0, prepare.log.read_text()
    steps = 2 if streaming else rounds  # × H
    tracker = tracker_factory(
        min_peers=4, h=10, rounds=steps,
        data=f'source = "files"\ntrain-file = "{tmp_path / "train.bin"}"\n'
             f'val-file = "{tmp_path / "val.bin"}"\n',
        streaming=STREAMING if streaming else None,
        strategy=SPARSELOCO if kind == "sparseloco" else None)
    loco_peers = [spawn([BIN / "loco-peer", "--config", tracker.peer_config(tmp_path, f"loco-{i}")])
                  for i in range(2)]
    # DiLoCo: one PyTorch peer overlaps its rounds with its steps (--overlap), the other blocks
    # in them. Streaming: the run's fragment rounds overlap the steps in both. SparseLoCo: both
    # block in their rounds.
    torch_peers = [spawn([sys.executable, EXAMPLE, "--config",
                          tracker.peer_config(tmp_path, f"torch-{i}"), "--train",
                          tmp_path / "train.bin", "--rounds", steps, "--seed", i]
                         + (["--overlap"] if i == 1 and kind == "diloco" else []))
                   for i in range(2)]
    runs = [python_rounds(p, timeout=180) for p in torch_peers]
    for run in runs:
        assert run[-1]["loss"] < run[0]["loss"], f"a PyTorch peer's loss did not fall: {run}"
    runs += [loco_peer_rounds(p, timeout=180) for p in loco_peers]
    same_state_after_every_round(runs, rounds)
