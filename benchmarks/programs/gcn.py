"""Graph convolutional network (Kipf & Welling): sparse normalised adjacency built with
sparse_coo_tensor, eye + sparse, diag(...).to_sparse(), torch.spmm; Adam with weight decay
and NLL loss on masked nodes.

Source: https://github.com/pytorch/examples/blob/main/gcn/main.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: a random graph of 60 nodes, 20 features, 4 classes instead of Cora; 10 epochs.
Compare: losses
"""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Adam


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=False):
        super(GraphConv, self).__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = None
        if use_bias:
            self.bias = nn.Parameter(torch.Tensor(output_dim))
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        support = torch.mm(input_tensor, self.kernel)
        output = torch.spmm(adj_mat, support)
        if self.bias is not None:
            output = output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
        super(GCN, self).__init__()
        self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
        self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input_tensor, adj_mat):
        x = self.gc1(input_tensor, adj_mat)
        x = F.relu(x)
        x = self.dropout(x)
        x = self.gc2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def load_graph(device='cpu'):
    rng = np.random.default_rng(0)
    V, nfeat, nclass, E = 60, 20, 4, 150
    features = torch.FloatTensor((rng.random((V, nfeat)) < 0.2).astype(np.int32))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float('inf')] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features
    labels = torch.LongTensor(rng.integers(0, nclass, V))
    edges = rng.integers(0, V, (E, 2)).astype(np.int32)
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat
    degree_mat = torch.sum(adj_mat, dim=1)
    degree_mat = torch.sqrt(1 / degree_mat)
    degree_mat[degree_mat == float('inf')] = 0
    degree_mat = torch.diag(degree_mat).to_sparse()
    adj_mat = degree_mat @ adj_mat @ degree_mat
    return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)


def train_iter(epoch, model, optimizer, criterion, input, target, mask_train, mask_val,
               print_every=5):
    model.train()
    optimizer.zero_grad()
    output = model(*input)
    loss = criterion(output[mask_train], target[mask_train])
    loss.backward()
    optimizer.step()
    loss_train, acc_train = test(model, criterion, input, target, mask_train)
    loss_val, acc_val = test(model, criterion, input, target, mask_val)
    if epoch % print_every == 0:
        print(f'Epoch: {epoch:04d} loss_train: {loss_train:.4f} acc_train: {acc_train:.4f} '
              f'loss_val: {loss_val:.4f} acc_val: {acc_val:.4f}')


def test(model, criterion, input, target, mask):
    model.eval()
    with torch.no_grad():
        output = model(*input)
        output, target = output[mask], target[mask]
        loss = criterion(output, target)
        acc = (output.argmax(dim=1) == target).float().sum() / len(target)
    return loss.item(), acc.item()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='PyTorch Graph Convolutional Network')
    parser.add_argument('--epochs', type=int, default=10)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--l2', type=float, default=5e-4)
    parser.add_argument('--dropout-p', type=float, default=0.5)
    parser.add_argument('--hidden-dim', type=int, default=16)
    parser.add_argument('--include-bias', action='store_true', default=False)
    parser.add_argument('--seed', type=int, default=42)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    features, labels, adj_mat = load_graph(device=device)
    idx = torch.randperm(len(labels)).to(device)
    idx_test, idx_val, idx_train = idx[:20], idx[20:30], idx[30:]
    gcn = GCN(features.shape[1], args.hidden_dim, labels.max().item() + 1, args.include_bias,
              args.dropout_p).to(device)
    optimizer = Adam(gcn.parameters(), lr=args.lr, weight_decay=args.l2)
    criterion = nn.NLLLoss()
    for epoch in range(args.epochs):
        train_iter(epoch + 1, gcn, optimizer, criterion, (features, adj_mat), labels,
                   idx_train, idx_val)
    loss_test, acc_test = test(gcn, criterion, (features, adj_mat), labels, idx_test)
    print(f'Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}')
