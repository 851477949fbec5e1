"""A PyTorch peer of a run of its own model, not loco's GPT: a 2-layer LSTM (embed.weight,
encoder.weight_ih_l0, ..., head.bias) learning a sequence rule whose noise differs by data shard.
The run's model is this module's genesis file (loco.write_genesis; test_own_model.py writes it).
It binds the module's parameters by name, joins, trains with Adam and runs `rounds` rounds
(DiLoCo: peer.round every H steps; Streaming DiLoCo: peer.fragment_step after every step),
printing a line {"event": "joined", "fetched": F, "round": R} and then one per landed round:
  {"round": R, "kind": K, "members": M, "state": HASH, "loss": L, "first_loss": L0}
(L: the loss of the inner step the round landed after; L0: of its first inner step).
Usage: own_model_peer.py CONFIG ROUNDS SEED
"""

import argparse
import json

import torch
from torch import nn

import loco

VOCAB = 8


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.encoder = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, tokens):
        hidden, _ = self.encoder(self.embed(tokens))
        return self.head(hidden)


def batch(generator, noise, size=16, length=12):
    """Sequences of x' = 3x + 1 mod VOCAB, each token replaced by a random one with `noise`."""
    x = torch.randint(0, VOCAB, (size, 1), generator=generator)
    tokens = [x]
    for _ in range(length):
        x = (3 * x + 1) % VOCAB
        tokens.append(x)
    seq = torch.cat(tokens, dim=1)
    flip = torch.rand(seq.shape, generator=generator) < noise
    return torch.where(flip, torch.randint(0, VOCAB, seq.shape, generator=generator), seq)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("rounds", type=int)
    p.add_argument("seed", type=int)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(100 + args.seed)  # its own initialisation: the run's genesis replaces it
    model = Model()
    with loco.Peer(args.config) as peer:
        parameters = dict(model.named_parameters())
        for name, _ in peer.tensors():
            peer.bind(name, parameters[name])
        joined = peer.join(timeout=30)
        print(json.dumps({"event": "joined", "fetched": joined.fetched, "round": joined.round}),
              flush=True)
        generator = torch.Generator().manual_seed(args.seed * 1000 + joined.shard_index)
        noise = 0.05 * (1 + joined.shard_index)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
        done = 0
        loss = first_loss = float("nan")

        def step():
            seq = batch(generator, noise)
            logits = model(seq[:, :-1])
            value = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
            optimizer.zero_grad()
            value.backward()
            optimizer.step()
            return value.item()

        def report(result):
            nonlocal done
            print(json.dumps({"round": result.round, "kind": result.kind,
                              "members": result.members, "state": result.state_hash,
                              "loss": loss, "first_loss": first_loss}), flush=True)
            done += 1

        at = joined.step
        streaming = peer.streaming() is not None
        while done < args.rounds:
            loss = step()
            first_loss = loss if at == joined.step else first_loss
            at += 1
            if streaming:
                for result in peer.fragment_step(at, loss):
                    report(result)
                    at = result.step if result.kind == "replaced" else at
            elif at % peer.inner_steps == 0:
                report(peer.round(loss))
        peer.leave("finished its rounds")


if __name__ == "__main__":
    main()
