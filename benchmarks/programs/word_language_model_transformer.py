"""Word-level language model with nn.TransformerEncoder: sinusoidal positional encoding
(a registered buffer), a square subsequent mask, embedding scaled by sqrt(ninp), log-softmax
decoder, truncated BPTT, gradient clipping and a hand-written SGD step.

Source: https://github.com/pytorch/examples/blob/main/word_language_model/model.py
(TransformerModel, PositionalEncoding) and main.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: a random token corpus of 50 words, emsize 32, 2 heads, 2 layers, bptt 8, 2 epochs
of 4 batches; the encoder layers' dropout is 0 (PyTorch draws attention dropout inside its
fused attention kernel, which cannot be replayed; the positional encoding's stays).
Compare: losses
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super(PositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super(TransformerModel, self).__init__(d_model=ninp, nhead=nhead,
                                               dim_feedforward=nhid,
                                               num_encoder_layers=nlayers, dropout=0.0)
        self.model_type = 'Transformer'
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            device = src.device
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                mask = self._generate_square_subsequent_mask(len(src)).to(device)
                self.src_mask = mask
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


torch.manual_seed(1111)
device = torch.device("cpu")
rng = np.random.default_rng(0)
ntokens, bptt, clip = 50, 8, 0.25
train_ids = torch.from_numpy(rng.integers(0, ntokens, 4 * 8 * 4 + 1))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


train_data = batchify(train_ids, 4)
model = TransformerModel(ntokens, 32, 2, 64, 2, 0.2).to(device)
criterion = nn.NLLLoss()


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


lr = 5.0
for epoch in range(1, 3):
    model.train()
    total_loss = 0.
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        output = model(data)
        output = output.view(-1, ntokens)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    print('| epoch {:3d} | loss {:5.2f} | ppl {:8.2f}'.format(
        epoch, total_loss / (batch + 1), math.exp(total_loss / (batch + 1))))
    lr /= 4.0
