"""Word-level language model: embedding, multi-layer LSTM with dropout, tied-size decoder,
truncated BPTT with hidden-state repackaging, gradient clipping, a hand-written SGD step
and learning-rate annealing.

Source: https://github.com/pytorch/examples/blob/main/word_language_model/main.py and model.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: a random token corpus of 50 words instead of Wikitext-2, emsize = nhid = 32,
bptt 8, 2 epochs of 4 batches; the LSTM's own dropout is 0 (PyTorch draws it inside its
C++ kernel, which cannot be replayed), the model's Dropout layers stay.
Compare: losses
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False,
                 rnn_dropout=0.0):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=rnn_dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity,
                              dropout=rnn_dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


parser = argparse.ArgumentParser(description='PyTorch Wikitext-2 RNN/LSTM Language Model')
parser.add_argument('--model', type=str, default='LSTM')
parser.add_argument('--emsize', type=int, default=32)
parser.add_argument('--nhid', type=int, default=32)
parser.add_argument('--nlayers', type=int, default=2)
parser.add_argument('--lr', type=float, default=20)
parser.add_argument('--clip', type=float, default=0.25)
parser.add_argument('--epochs', type=int, default=2)
parser.add_argument('--batch_size', type=int, default=4)
parser.add_argument('--bptt', type=int, default=8)
parser.add_argument('--dropout', type=float, default=0.2)
parser.add_argument('--tied', action='store_true', default=True)
parser.add_argument('--seed', type=int, default=1111)
parser.add_argument('--log-interval', type=int, default=2)
parser.add_argument('--save', type=str, default='model.pt')
args = parser.parse_args()

torch.manual_seed(args.seed)
device = torch.device("cpu")

rng = np.random.default_rng(0)
ntokens = 50
train_ids = torch.from_numpy(rng.integers(0, ntokens, 4 * 8 * 4 + 1))
val_ids = torch.from_numpy(rng.integers(0, ntokens, 2 * 8 * 2 + 1))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


eval_batch_size = 2
train_data = batchify(train_ids, args.batch_size)
val_data = batchify(val_ids, eval_batch_size)

model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout,
                 args.tied).to(device)
criterion = nn.NLLLoss()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train():
    model.train()
    total_loss = 0.
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | ms/batch {:5.2f} | '
                  'loss {:5.2f} | ppl {:8.2f}'.format(
                      epoch, batch, len(train_data) // args.bptt, lr,
                      elapsed * 1000 / args.log_interval, cur_loss, math.exp(cur_loss)))
            total_loss = 0
            start_time = time.time()


lr = args.lr
best_val_loss = None
for epoch in range(1, args.epochs+1):
    train()
    val_loss = evaluate(val_data)
    print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
        epoch, val_loss, math.exp(val_loss)))
    if not best_val_loss or val_loss < best_val_loss:
        with open(args.save, 'wb') as f:
            torch.save(model.state_dict(), f)
        best_val_loss = val_loss
    else:
        lr /= 4.0

with open(args.save, 'rb') as f:
    model.load_state_dict(torch.load(f))
    model.rnn.flatten_parameters()
print('=' * 89)
print('| End of training | test loss {:5.2f}'.format(evaluate(val_data)))
