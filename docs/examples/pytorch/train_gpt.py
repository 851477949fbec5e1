"""A PyTorch peer of a loco run: a nanoGPT-style GPT, AdamW as the inner optimizer, loco's DiLoCo
as the outer loop (docs/PYTORCH.md). A starting point for researchers: the model, the data and
the inner loop are yours to change; the tensors' names and shapes are the run's ([model] of its
config, nanoGPT's names).

    loco-prepare --source markov --markov.vocab 64 --train-out train.bin --val-out val.bin
    python3 train_gpt.py --config peer.toml --train train.bin --rounds 10

The peer config is a loco-peer config ([peer], [run], [tracker]); the run config it names must
read the same token files ([data] source = "files") for loco-peer peers of the same run. Prints
one JSON line per round: {"round", "kind", "members", "state", "loss", "round_s", "times",
"bytes_sent"} (round_s: the seconds loco's calls took; times: loco's part, by phase), and with
--val a last line {"val_loss", "bytes_sent"}: the final model's loss on fixed validation windows.
A Streaming DiLoCo run config ([strategy] kind = "streaming") makes it run fragment rounds on the
run's schedule instead (peer.fragment_step after every inner step): --rounds × H inner steps, a
line per landed fragment round. A SparseLoCo run config (kind = "sparseloco") runs the same loop as
DiLoCo's, its rounds sending the top-k of each peer's error feedback (--overlap is DiLoCo's).
"""

import argparse
import json
import math
import time
import tomllib
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import loco


class SelfAttention(nn.Module):
    def __init__(self, d, n_head, context):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask, persistent=False)  # not a parameter of the run

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.n_head)
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, d, n_head, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = SelfAttention(d, n_head, context)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(d, 4 * d), c_proj=nn.Linear(4 * d, d)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")  # loco's GELU
        return x + self.mlp.c_proj(h)


class GPT(nn.Module):
    """nanoGPT's GPT (bias, tied LM head), so its state-dict names are the run's."""

    def __init__(self, vocab, context, n_layer, n_head, d):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(context, d),
            h=nn.ModuleList(Block(d, n_head, context) for _ in range(n_layer)),
            ln_f=nn.LayerNorm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as in loco

    def forward(self, tokens, targets):
        t = self.transformer
        x = t.wte(tokens) + t.wpe(torch.arange(tokens.shape[1]))
        for block in t.h:
            x = block(x)
        logits = self.lm_head(t.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def evaluate(model, tokens, context, batches=8, batch=16, seed=12345):
    """The mean loss on `batches` batches of windows of `tokens` drawn with a fixed seed: the same
    windows for any model, any peer, any run."""
    rng = np.random.default_rng(seed)
    total = 0.0
    with torch.no_grad():
        for _ in range(batches):
            starts = rng.integers(0, len(tokens) - context - 1, batch)
            window = torch.from_numpy(
                np.stack([tokens[s:s + context + 1] for s in starts]).astype(np.int64))
            total += model(window[:, :-1], window[:, 1:]).item()
    return total / batches


def print_round(result, loss, seconds):
    """The round's JSON line; `seconds`: what loco's calls took of the trainer's time."""
    print(json.dumps({"round": result.round, "kind": result.kind, "members": result.members,
                      "state": result.state_hash, "loss": loss, "round_s": seconds,
                      "times": result.times, "bytes_sent": result.bytes_sent}), flush=True)


def run_model(peer, peer_config):
    """The GPT of the run's [model]: sizes from the run's tensors, n-head from its config."""
    shapes = dict(peer.tensors())
    vocab, d = shapes["transformer.wte.weight"]
    context = shapes["transformer.wpe.weight"][0]
    n_layer = sum(1 for name in shapes if name.endswith(".ln_1.weight"))
    run = tomllib.loads(Path(peer_config).read_text())["run"]["config"]
    run_config = tomllib.loads((Path(peer_config).parent / run).read_text())
    n_head = run_config.get("model", {}).get("n-head", 4)
    return GPT(vocab, context, n_layer, n_head, d), context


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", required=True, help="the peer config (loco-peer's keys)")
    p.add_argument("--train", required=True, help="training tokens (uint16, loco-prepare)")
    p.add_argument("--val", help="validation tokens: print the final model's loss on them")
    p.add_argument("--overlap", action="store_true",
                   help="overlap each DiLoCo round with the next inner steps (round_start, "
                        "round_land); a Streaming run's fragment rounds always overlap them")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    with loco.Peer(args.config) as peer:
        model, context = run_model(peer, args.config)
        peer.bind_all(model.state_dict())  # no copy: loco writes θ into the parameters
        if args.overlap and not peer.streaming():
            peer.overlap()
        joined = peer.join(timeout=60)     # the run's weights, never this script's init
        inner = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
        tokens = np.memmap(args.train, dtype=np.uint16, mode="r")
        size = len(tokens) // joined.shard_count  # this peer's shard: one slice of the file
        shard = tokens[joined.shard_index * size:(joined.shard_index + 1) * size]
        rng = np.random.default_rng(args.seed * 1000 + joined.shard_index)
        # --overlap: the round started at a phase's end lands while the next phase trains (as
        # soon as round_ready() says its merge may be applied, at the next round at the latest).
        in_flight = None  # (the phase's mean loss, the seconds round_start took)
        result = None

        def inner_step():
            starts = rng.integers(0, len(shard) - context - 1, args.batch)
            window = np.stack([shard[s:s + context + 1] for s in starts]).astype(np.int64)
            batch = torch.from_numpy(window)
            loss = model(batch[:, :-1], batch[:, 1:])
            inner.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            inner.step()
            return loss.item()

        if peer.streaming():  # fragment rounds, started and landed as the run's schedule says
            step, losses = joined.step, []
            for _ in range(args.rounds * peer.inner_steps):
                losses.append(inner_step())
                step += 1
                started = time.perf_counter()
                with torch.no_grad():  # loco merges θ_p into the fragment's parameters
                    landed = peer.fragment_step(step, losses[-1])
                phase_loss = float(np.mean(losses)) if losses else float("nan")
                for result in landed:  # the loss: of the steps since the last landing
                    print_round(result, phase_loss, time.perf_counter() - started)
                    losses = []
                    step = result.step if result.kind == "replaced" else step
            finish(peer, args, model, context, result)
            return

        def land():
            nonlocal result
            started = time.perf_counter()
            result = peer.round_land()
            print_round(result, in_flight[0], in_flight[1] + time.perf_counter() - started)

        for _ in range(args.rounds):
            losses = []
            for _ in range(peer.inner_steps):
                losses.append(inner_step())
                if in_flight and peer.round_ready():
                    land()
                    in_flight = None
            mean = float(np.mean(losses))
            if in_flight:  # not landed during the phase: wait for it now
                land()
                in_flight = None
            started = time.perf_counter()
            with torch.no_grad():  # loco writes the new θ (θ' when overlapped) into them
                if args.overlap:
                    has_mean = peer.round_start(mean)
                    in_flight = (mean, time.perf_counter() - started)
                    if not has_mean:  # the round ended at once: it lands now
                        land()
                        in_flight = None
                else:
                    result = peer.round(mean)
                    print_round(result, mean, time.perf_counter() - started)
        if in_flight:
            land()
        finish(peer, args, model, context, result)


def finish(peer, args, model, context, result):
    """Leaves the run and, with --val, prints the final model's validation loss."""
    peer.leave("finished its rounds")
    if args.val:
        val = np.memmap(args.val, dtype=np.uint16, mode="r")
        print(json.dumps({"val_loss": evaluate(model, val, context),
                          "bytes_sent": result.bytes_sent if result else 0}), flush=True)


if __name__ == "__main__":
    main()
