"""makemore with its MLP model (Bengio et al. 2003): character dataset from a word list,
an InfiniteDataLoader over RandomSampler(replacement=True, num_samples=1e10), AdamW,
evaluate() under torch.inference_mode, and sampling with multinomial.

Source: https://github.com/karpathy/makemore (makemore.py)
Licence: MIT (karpathy/makemore); a reimplementation after the original's structure and API
use, not a copy.
Trimmed: 60 generated names instead of names.txt, n_embd 16, n_embd2 32, batch 8,
8 steps; no files written.
Compare: losses
"""
import random

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


class ModelConfig:
    def __init__(self, block_size=None, vocab_size=None, n_layer=4, n_embd=64, n_embd2=64,
                 n_head=4):
        self.block_size, self.vocab_size = block_size, vocab_size
        self.n_layer, self.n_embd, self.n_embd2, self.n_head = n_layer, n_embd, n_embd2, n_head


class MLP(nn.Module):
    """takes the previous block_size tokens, encodes them with a lookup table, concatenates
    the vectors and predicts the next token with an MLP."""

    def __init__(self, config):
        super().__init__()
        self.block_size = config.block_size
        self.vocab_size = config.vocab_size
        self.wte = nn.Embedding(config.vocab_size + 1, config.n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(self.block_size * config.n_embd, config.n_embd2),
            nn.Tanh(),
            nn.Linear(config.n_embd2, self.vocab_size)
        )

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        embs = []
        for k in range(self.block_size):
            tok_emb = self.wte(idx)
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size
            embs.append(tok_emb)
        x = torch.cat(embs, -1)
        logits = self.mlp(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
    block_size = model.get_block_size()
    for _ in range(max_new_tokens):
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits, _ = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float('Inf')
        probs = F.softmax(logits, dim=-1)
        if do_sample:
            idx_next = torch.multinomial(probs, num_samples=1)
        else:
            _, idx_next = torch.topk(probs, k=1, dim=-1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.chars = chars
        self.max_word_length = max_word_length
        self.stoi = {ch: i+1 for i, ch in enumerate(chars)}
        self.itos = {i: s for s, i in self.stoi.items()}

    def __len__(self):
        return len(self.words)

    def contains(self, word):
        return word in self.words

    def get_vocab_size(self):
        return len(self.chars) + 1

    def get_output_length(self):
        return self.max_word_length + 1

    def encode(self, word):
        return torch.tensor([self.stoi[w] for w in word], dtype=torch.long)

    def decode(self, ix):
        return ''.join(self.itos[i] for i in ix)

    def __getitem__(self, idx):
        word = self.words[idx]
        ix = self.encode(word)
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1+len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix)+1:] = -1
        return x, y


def create_datasets():
    rnd = random.Random(0)
    words = [''.join(rnd.choice('abcdefghij') for _ in range(rnd.randint(3, 7)))
             for _ in range(60)]
    chars = sorted(list(set(''.join(words))))
    max_word_length = max(len(w) for w in words)
    test_set_size = min(1000, int(len(words) * 0.1))
    rp = torch.randperm(len(words)).tolist()
    train_words = [words[i] for i in rp[:-test_set_size]]
    test_words = [words[i] for i in rp[-test_set_size:]]
    return (CharDataset(train_words, chars, max_word_length),
            CharDataset(test_words, chars, max_word_length))


class InfiniteDataLoader:
    def __init__(self, dataset, **kwargs):
        train_sampler = torch.utils.data.RandomSampler(dataset, replacement=True,
                                                       num_samples=int(1e10))
        self.train_loader = DataLoader(dataset, sampler=train_sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


@torch.inference_mode()
def evaluate(model, dataset, batch_size=50, max_batches=None):
    model.eval()
    loader = DataLoader(dataset, shuffle=True, batch_size=batch_size, num_workers=0)
    losses = []
    for i, batch in enumerate(loader):
        batch = [t.to(device) for t in batch]
        X, Y = batch
        logits, loss = model(X, Y)
        losses.append(loss.item())
        if max_batches is not None and i >= max_batches:
            break
    mean_loss = torch.tensor(losses).mean().item()
    model.train()
    return mean_loss


torch.manual_seed(3407)
torch.cuda.manual_seed_all(3407)
device = 'cpu'
train_dataset, test_dataset = create_datasets()
vocab_size = train_dataset.get_vocab_size()
block_size = train_dataset.get_output_length()
config = ModelConfig(vocab_size=vocab_size, block_size=block_size, n_embd=16, n_embd2=32)
model = MLP(config)
model.to(device)
print(f"model #params: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01,
                              betas=(0.9, 0.99), eps=1e-8)
batch_loader = InfiniteDataLoader(train_dataset, batch_size=8, pin_memory=True, num_workers=0)
step = 0
while True:
    batch = batch_loader.next()
    batch = [t.to(device) for t in batch]
    X, Y = batch
    logits, loss = model(X, Y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    if step % 2 == 0:
        print(f"step {step} | loss {loss.item():.4f}")
    if step > 0 and step % 4 == 0:
        train_loss = evaluate(model, train_dataset, batch_size=20, max_batches=2)
        test_loss = evaluate(model, test_dataset, batch_size=20, max_batches=2)
        print(f"step {step} train loss: {train_loss} test loss: {test_loss}")
    step += 1
    if step >= 8:
        break

X_init = torch.zeros(4, 1, dtype=torch.long).to(device)
X_samp = generate(model, X_init, train_dataset.get_output_length() - 1, top_k=None,
                  do_sample=True).to('cpu')
for i in range(X_samp.size(0)):
    row = X_samp[i, 1:].tolist()
    crop_index = row.index(0) if 0 in row else len(row)
    print(train_dataset.decode(row[:crop_index]))
