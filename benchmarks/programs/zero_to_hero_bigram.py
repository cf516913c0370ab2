"""Neural Networks: Zero to Hero, makemore part 1: a counted bigram model (integer tensor,
indexed +=, normalising with keepdims, sampling with multinomial from a Generator) and the
same model as a one-layer network on one-hot inputs trained by hand-written gradient
descent.

Source: https://github.com/karpathy/nn-zero-to-hero (lectures/makemore/makemore_part1_bigrams.ipynb)
Licence: MIT (karpathy/nn-zero-to-hero); a reimplementation after the notebook's structure
and API use, not a copy.
Trimmed: 40 generated names instead of names.txt, 10 descent steps, 3 samples.
Compare: losses
"""
import random

import torch
import torch.nn.functional as F

rnd = random.Random(0)
words = [''.join(rnd.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rnd.randint(2, 6)))
         for _ in range(40)]
chars = sorted(list(set(''.join(words))))
stoi = {s: i+1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)

N = torch.zeros((V, V), dtype=torch.int32)
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1

P = (N+1).float()
P /= P.sum(1, keepdims=True)

g = torch.Generator().manual_seed(2147483647)
for i in range(3):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0 or len(out) > 20:
            break
    print(''.join(out))

log_likelihood = 0.0
n = 0
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        logprob = torch.log(P[stoi[ch1], stoi[ch2]])
        log_likelihood += logprob
        n += 1
nll = -log_likelihood
print(f'{nll/n=}')

xs, ys = [], []
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print('number of examples: ', num)

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((V, V), generator=g, requires_grad=True)
for k in range(10):
    xenc = F.one_hot(xs, num_classes=V).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01*(W**2).mean()
    print(loss.item())
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
