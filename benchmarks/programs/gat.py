"""Graph attention network: multi-head attention scores from a shared weight and attention
vectors, masking non-edges, softmax over neighbours, ELU between two layers; Adam and NLL
loss on masked nodes.

Source: https://github.com/pytorch/examples/blob/main/gat/main.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: a random graph of 40 nodes, 16 features, 3 classes instead of Cora; 4 heads of 8;
10 epochs.
Compare: losses
"""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Adam


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, n_heads: int, concat: bool = False,
                 dropout: float = 0.4, leaky_relu_slope: float = 0.2):
        super(GraphAttentionLayer, self).__init__()
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat:
            self.out_features = out_features
            assert out_features % n_heads == 0
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.softmax = nn.Softmax(dim=1)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed: torch.Tensor):
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self, h: torch.Tensor, adj_mat: torch.Tensor):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask)
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        else:
            h_prime = h_prime.mean(dim=0)
        return h_prime


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4,
                 leaky_relu_slope=0.2):
        super(GAT, self).__init__()
        self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden,
                                        n_heads=n_heads, concat=concat, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)
        self.gat2 = GraphAttentionLayer(in_features=n_hidden, out_features=num_classes,
                                        n_heads=1, concat=False, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)

    def forward(self, input_tensor: torch.Tensor, adj_mat: torch.Tensor):
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def load_graph(device='cpu'):
    rng = np.random.default_rng(0)
    V, E = 40, 100
    features = torch.FloatTensor((rng.random((V, 16)) < 0.3).astype(np.int32))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float('inf')] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features
    labels = torch.LongTensor(rng.integers(0, 3, V))
    edges = rng.integers(0, V, (E, 2)).astype(np.int32)
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat
    return features.to(device), labels.to(device), adj_mat.to(device)


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
    torch.manual_seed(13)
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device('cpu')
    features, labels, adj_mat = load_graph(device=device)
    idx = torch.randperm(len(labels)).to(device)
    idx_test, idx_val, idx_train = idx[:10], idx[10:20], idx[20:]
    gat_net = GAT(in_features=features.shape[1], n_hidden=8, n_heads=4,
                  num_classes=labels.max().item() + 1, concat=False, dropout=0.6,
                  leaky_relu_slope=0.2).to(device)
    optimizer = Adam(gat_net.parameters(), lr=0.005, weight_decay=5e-4)
    criterion = nn.NLLLoss()
    for epoch in range(10):
        train_iter(epoch + 1, gat_net, optimizer, criterion, (features, adj_mat), labels,
                   idx_train, idx_val)
    loss_test, acc_test = test(gat_net, criterion, (features, adj_mat), labels, idx_test)
    print(f'Test set results: loss {loss_test:.4f} accuracy {acc_test:.4f}')
