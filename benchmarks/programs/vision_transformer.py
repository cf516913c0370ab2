"""Vision transformer: patches cut with Tensor.unfold twice and a 6-D permute, a linear
projection with class token and positional embedding parameters, encoder blocks of
LayerNorm + nn.MultiheadAttention + GELU MLP, an MLP head; Adam with weight decay, a tqdm
progress bar from torch.hub, the best weights saved by validation loss.

Source: https://github.com/pytorch/examples/blob/main/vision_transformer/main.py
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: random 3x32x32 "CIFAR10" images (no torchvision), patch 8, latent 32, 2 heads,
2 encoders, 2 epochs of 2 batches of 4.  Needs the tqdm package (PyTorch's fallback for
torch.hub.tqdm is not iterable; ember's is).
Compare: losses
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch import optim
from torch.hub import tqdm
from torch.utils.data import DataLoader, TensorDataset


class PatchExtractor(nn.Module):
    def __init__(self, patch_size=16):
        super().__init__()
        self.patch_size = patch_size

    def forward(self, input_data):
        batch_size, channels, height, width = input_data.size()
        assert height % self.patch_size == 0 and width % self.patch_size == 0, \
            f"Input height ({height}) and width ({width}) must be divisible by patch size"
        num_patches_h = height // self.patch_size
        num_patches_w = width // self.patch_size
        num_patches = num_patches_h * num_patches_w
        patches = input_data.unfold(2, self.patch_size, self.patch_size). \
            unfold(3, self.patch_size, self.patch_size). \
            permute(0, 2, 3, 1, 4, 5). \
            contiguous(). \
            view(batch_size, num_patches, -1)
        return patches


class InputEmbedding(nn.Module):
    def __init__(self, args):
        super(InputEmbedding, self).__init__()
        self.patch_size = args.patch_size
        self.n_channels = args.n_channels
        self.latent_size = args.latent_size
        use_cuda = not args.no_cuda and torch.cuda.is_available()
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.batch_size = args.batch_size
        self.input_size = self.patch_size * self.patch_size * self.n_channels
        self.LinearProjection = nn.Linear(self.input_size, self.latent_size)
        self.class_token = nn.Parameter(torch.randn(self.batch_size, 1, self.latent_size)
                                        .to(self.device))
        self.pos_embedding = nn.Parameter(torch.randn(self.batch_size, 1, self.latent_size)
                                          .to(self.device))

    def forward(self, input_data):
        input_data = input_data.to(self.device)
        patchify = PatchExtractor(patch_size=self.patch_size)
        patches = patchify(input_data)
        linear_projection = self.LinearProjection(patches).to(self.device)
        b, n, _ = linear_projection.shape
        linear_projection = torch.cat((self.class_token, linear_projection), dim=1)
        pos_embed = self.pos_embedding[:, :n + 1, :]
        linear_projection += pos_embed
        return linear_projection


class EncoderBlock(nn.Module):
    def __init__(self, args):
        super(EncoderBlock, self).__init__()
        self.latent_size = args.latent_size
        self.num_heads = args.num_heads
        self.dropout = args.dropout
        self.norm = nn.LayerNorm(self.latent_size)
        self.attention = nn.MultiheadAttention(self.latent_size, self.num_heads,
                                               dropout=self.dropout)
        self.enc_MLP = nn.Sequential(
            nn.Linear(self.latent_size, self.latent_size * 4),
            nn.GELU(),
            nn.Dropout(self.dropout),
            nn.Linear(self.latent_size * 4, self.latent_size),
            nn.Dropout(self.dropout)
        )

    def forward(self, emb_patches):
        first_norm = self.norm(emb_patches)
        attention_out = self.attention(first_norm, first_norm, first_norm)[0]
        first_added = attention_out + emb_patches
        second_norm = self.norm(first_added)
        mlp_out = self.enc_MLP(second_norm)
        output = mlp_out + first_added
        return output


class ViT(nn.Module):
    def __init__(self, args):
        super(ViT, self).__init__()
        self.num_encoders = args.num_encoders
        self.latent_size = args.latent_size
        self.num_classes = args.num_classes
        self.dropout = args.dropout
        self.embedding = InputEmbedding(args)
        self.encoders = nn.ModuleList([EncoderBlock(args) for _ in range(self.num_encoders)])
        self.MLPHead = nn.Sequential(
            nn.LayerNorm(self.latent_size),
            nn.Linear(self.latent_size, self.latent_size),
            nn.Linear(self.latent_size, self.num_classes),
        )

    def forward(self, test_input):
        enc_output = self.embedding(test_input)
        for enc_layer in self.encoders:
            enc_output = enc_layer(enc_output)
        class_token_embed = enc_output[:, 0]
        return self.MLPHead(class_token_embed)


class TrainEval:
    def __init__(self, args, model, train_dataloader, val_dataloader, optimizer, criterion,
                 device):
        self.model = model
        self.train_dataloader = train_dataloader
        self.val_dataloader = val_dataloader
        self.optimizer = optimizer
        self.criterion = criterion
        self.epoch = args.epochs
        self.device = device
        self.args = args

    def train_fn(self, current_epoch):
        self.model.train()
        total_loss = 0.0
        tk = tqdm(self.train_dataloader, desc="EPOCH" + "[TRAIN]" + str(current_epoch + 1)
                  + "/" + str(self.epoch))
        for t, data in enumerate(tk):
            images, labels = data
            images, labels = images.to(self.device), labels.to(self.device)
            self.optimizer.zero_grad()
            logits = self.model(images)
            loss = self.criterion(logits, labels)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
            tk.set_postfix({"Loss": "%6f" % float(total_loss / (t + 1))})
        return total_loss / len(self.train_dataloader)

    def eval_fn(self, current_epoch):
        self.model.eval()
        total_loss = 0.0
        tk = tqdm(self.val_dataloader, desc="EPOCH" + "[VALID]" + str(current_epoch + 1)
                  + "/" + str(self.epoch))
        for t, data in enumerate(tk):
            images, labels = data
            images, labels = images.to(self.device), labels.to(self.device)
            logits = self.model(images)
            loss = self.criterion(logits, labels)
            total_loss += loss.item()
            tk.set_postfix({"Loss": "%6f" % float(total_loss / (t + 1))})
        return total_loss / len(self.val_dataloader)

    def train(self):
        best_valid_loss = np.inf
        best_train_loss = np.inf
        for i in range(self.epoch):
            train_loss = self.train_fn(i)
            val_loss = self.eval_fn(i)
            if val_loss < best_valid_loss:
                torch.save(self.model.state_dict(), "best-weights.pt")
                print("Saved Best Weights")
                best_valid_loss = val_loss
                best_train_loss = train_loss
        print(f"Training Loss : {best_train_loss}")
        print(f"Valid Loss : {best_valid_loss}")


def main():
    parser = argparse.ArgumentParser(description='Vision Transformer in PyTorch')
    parser.add_argument('--no-cuda', action='store_true', default=False)
    parser.add_argument('--patch-size', type=int, default=8)
    parser.add_argument('--latent-size', type=int, default=32)
    parser.add_argument('--n-channels', type=int, default=3)
    parser.add_argument('--num-heads', type=int, default=2)
    parser.add_argument('--num-encoders', type=int, default=2)
    parser.add_argument('--dropout', type=int, default=0.1)
    parser.add_argument('--img-size', type=int, default=32)
    parser.add_argument('--num-classes', type=int, default=10)
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--lr', type=float, default=1e-2)
    parser.add_argument('--weight-decay', type=int, default=3e-2)
    parser.add_argument('--batch-size', type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    use_cuda = not args.no_cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    rng = np.random.default_rng(0)

    def data(n):
        return TensorDataset(torch.from_numpy(rng.random((n, 3, 32, 32), dtype=np.float32)),
                             torch.from_numpy(rng.integers(0, 10, n)))
    train_loader = DataLoader(data(8), batch_size=args.batch_size, shuffle=True)
    valid_loader = DataLoader(data(8), batch_size=args.batch_size, shuffle=True)
    model = ViT(args).to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    criterion = nn.CrossEntropyLoss()
    TrainEval(args, model, train_loader, valid_loader, optimizer, criterion, device).train()


if __name__ == "__main__":
    main()
