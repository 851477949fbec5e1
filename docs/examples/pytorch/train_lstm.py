"""A PyTorch peer of a loco run of your own model (docs/PYTORCH.md, "Your own model"): a 2-layer
LSTM language model, not loco's GPT, AdamW as the inner optimizer, loco's DiLoCo as the outer
loop. The run's model is this module's genesis file, which the organiser writes once:

    python3 train_lstm.py --write-genesis genesis.safetensors   # prints the [model] lines
    python3 train_lstm.py --config peer.toml --train train.bin --rounds 10

The run config (the tracker's and every peer's) holds the printed lines and names the file beside
it; the peer config is a loco-peer config ([peer], [run], [tracker]). Token files: uint16, as
loco-prepare writes them (vocabulary 64). Prints one JSON line per round: {"round", "kind",
"members", "state", "loss", "round_s", "times", "bytes_sent"} (round_s: the seconds loco's calls
took; times: loco's part, by phase), and with --val a last line {"val_loss", "bytes_sent",
"parameters"}: the final model's loss on fixed validation windows.

--alone trains the same model without loco, one process (the baseline of bench/run.sh
torch-peers MODEL=own): --steps steps of --batch windows from the whole file.
"""

import argparse
import json
import time

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import loco

VOCAB, CONTEXT, SEED = 64, 16, 0


class LSTMModel(nn.Module):
    """embed.weight, encoder.weight_ih_l0, ..., encoder.bias_hh_l1, head.weight, head.bias."""

    def __init__(self, d=48, hidden=96):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d)
        self.encoder = nn.LSTM(d, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, VOCAB)

    def forward(self, tokens, targets):
        hidden, _ = self.encoder(self.embed(tokens))
        logits = self.head(hidden)
        return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def genesis_model():
    """The module as the run starts: SEED's initialisation, the genesis file's values."""
    torch.manual_seed(SEED)
    return LSTMModel()


def windows(tokens, rng, batch):
    starts = rng.integers(0, len(tokens) - CONTEXT - 1, batch)
    window = np.stack([tokens[s:s + CONTEXT + 1] for s in starts]).astype(np.int64)
    window = torch.from_numpy(window)
    return window[:, :-1], window[:, 1:]


def evaluate(model, tokens, batches=8, batch=16, seed=12345):
    """The mean loss on fixed windows of `tokens`: the same for any model, peer or run."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        return float(np.mean([model(*windows(tokens, rng, batch)).item() for _ in range(batches)]))


def trainer(model, tokens, rng, batch, lr):
    """One inner step a call (AdamW, gradients clipped at 1); returns its loss."""
    inner = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)

    def step():
        loss = model(*windows(tokens, rng, batch))
        inner.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        inner.step()
        return loss.item()

    return step


def print_round(result, loss, seconds):
    print(json.dumps({"round": result.round, "kind": result.kind, "members": result.members,
                      "state": result.state_hash, "loss": loss, "round_s": seconds,
                      "times": result.times, "bytes_sent": result.bytes_sent}), flush=True)


def train_peer(peer, args, model, step):
    """args.rounds DiLoCo rounds of H inner steps; --overlap: each round lands while the next
    phase trains (round_start, then round_land once round_ready, at the next round at the
    latest). Returns the last round's result."""
    in_flight, result = None, None  # in_flight: (the phase's mean loss, round_start's seconds)

    def land():
        started = time.perf_counter()
        landed = peer.round_land()
        print_round(landed, in_flight[0], in_flight[1] + time.perf_counter() - started)
        return landed

    for _ in range(args.rounds):
        losses = []
        for _ in range(peer.inner_steps):
            losses.append(step())
            if in_flight and peer.round_ready():
                result, in_flight = land(), None
        if in_flight:
            result, in_flight = land(), None
        mean, started = float(np.mean(losses)), time.perf_counter()
        with torch.no_grad():  # loco writes the new θ (θ' when overlapped) into the parameters
            if not args.overlap:
                result = peer.round(mean)
                print_round(result, mean, time.perf_counter() - started)
                continue
            has_mean = peer.round_start(mean)
            in_flight = (mean, time.perf_counter() - started)
            if not has_mean:  # the round ended without a mean: it lands now
                result, in_flight = land(), None
    if in_flight:
        result = land()
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write-genesis", metavar="FILE", help="write the run's genesis file, exit")
    p.add_argument("--config", help="the peer config (loco-peer's keys)")
    p.add_argument("--train", help="training tokens (uint16, loco-prepare)")
    p.add_argument("--val", help="validation tokens: print the final model's loss on them")
    p.add_argument("--overlap", action="store_true", help="overlapped DiLoCo rounds")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--alone", action="store_true", help="train without loco (--steps steps)")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.write_genesis:
        loco.write_genesis(genesis_model(), args.write_genesis)
        return
    tokens = np.memmap(args.train, dtype=np.uint16, mode="r")
    model, result = genesis_model(), None
    if args.alone:
        step = trainer(model, tokens, np.random.default_rng(args.seed), args.batch, args.lr)
        for _ in range(args.steps):
            step()
    else:
        torch.manual_seed(args.seed)  # a peer's own init does not matter: join writes the run's
        model = LSTMModel()
        with loco.Peer(args.config) as peer:
            peer.bind_all(dict(model.named_parameters()))  # no copy: loco writes θ into them
            if args.overlap:
                peer.overlap()
            joined = peer.join(timeout=60)
            size = len(tokens) // joined.shard_count  # this peer's shard: one slice of the file
            shard = tokens[joined.shard_index * size:(joined.shard_index + 1) * size]
            rng = np.random.default_rng(args.seed * 1000 + joined.shard_index)
            result = train_peer(peer, args, model, trainer(model, shard, rng, args.batch, args.lr))
            peer.leave("finished its rounds")
    if args.val:
        val = np.memmap(args.val, dtype=np.uint16, mode="r")
        print(json.dumps({"val_loss": evaluate(model, val),
                          "bytes_sent": result.bytes_sent if result else 0,
                          "parameters": sum(p.numel() for p in model.parameters())}), flush=True)


if __name__ == "__main__":
    main()
