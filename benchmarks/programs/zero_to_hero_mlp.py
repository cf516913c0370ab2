"""Neural Networks: Zero to Hero, makemore part 2: an MLP language model written with raw
tensors (embedding table C indexed by a batch of contexts, tanh hidden layer, cross
entropy), minibatches drawn with randint from a Generator, parameters updated through .data.

Source: https://github.com/karpathy/nn-zero-to-hero (lectures/makemore/makemore_part2_mlp.ipynb)
Licence: MIT (karpathy/nn-zero-to-hero); a reimplementation after the notebook's structure
and API use, not a copy.
Trimmed: 80 generated names instead of names.txt, 20 steps, embedding 4, hidden 32.
Compare: losses
"""
import random

import torch
import torch.nn.functional as F

rnd = random.Random(42)
words = [''.join(rnd.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rnd.randint(2, 6)))
         for _ in range(80)]
chars = sorted(list(set(''.join(words))))
stoi = {s: i+1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
V = len(stoi)
block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


random.seed(42)
random.shuffle(words)
n1 = int(0.8*len(words))
n2 = int(0.9*len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((V, 4), generator=g)
W1 = torch.randn((12, 32), generator=g)
b1 = torch.randn(32, generator=g)
W2 = torch.randn((32, V), generator=g)
b2 = torch.randn(V, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

lri = []
lossi = []
stepi = []
for i in range(20):
    ix = torch.randint(0, Xtr.shape[0], (16,))
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 12) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 10 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    stepi.append(i)
    lossi.append(loss.log10().item())

emb = C[Xdev]
h = torch.tanh(emb.view(-1, 12) @ W1 + b1)
logits = h @ W2 + b2
print('dev loss', F.cross_entropy(logits, Ydev).item())

g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(3):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0 or len(out) > 15:
            break
    print(''.join(itos[i] for i in out))
