"""Fast neural style transfer: the TransformerNet (reflection-padded convolutions,
InstanceNorm2d, residual blocks, nearest-neighbour upsampling), gram matrices through bmm,
content and style MSE losses, Adam.

Source: https://github.com/pytorch/examples/blob/main/fast_neural_style/neural_style/
(transformer_net.py, utils.py, neural_style.py)
Licence: BSD-3-Clause (pytorch/examples); a reimplementation after the original's structure
and API use, not a copy.
Trimmed: random 3x32x32 images; torchvision's pretrained VGG16 is replaced by a small fixed
random conv stack (the loss network), channels 8/16/32 instead of 32/64/128, 3 steps.
Compare: losses
"""
import numpy as np
import torch
import torch.nn as nn


class TransformerNet(torch.nn.Module):
    def __init__(self, c=(8, 16, 32)):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, c[0], kernel_size=9, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(c[0], affine=True)
        self.conv2 = ConvLayer(c[0], c[1], kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(c[1], affine=True)
        self.conv3 = ConvLayer(c[1], c[2], kernel_size=3, stride=2)
        self.in3 = torch.nn.InstanceNorm2d(c[2], affine=True)
        self.res1 = ResidualBlock(c[2])
        self.res2 = ResidualBlock(c[2])
        self.deconv1 = UpsampleConvLayer(c[2], c[1], kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(c[1], affine=True)
        self.deconv2 = UpsampleConvLayer(c[1], c[0], kernel_size=3, stride=1, upsample=2)
        self.in5 = torch.nn.InstanceNorm2d(c[0], affine=True)
        self.deconv3 = ConvLayer(c[0], 3, kernel_size=9, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        return y


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest',
                                                   scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


class LossNet(nn.Module):
    """Stands in for VGG16's relu1_2 .. relu4_3 features: four fixed conv stages."""

    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU())
                                     for i, o in ((3, 8), (8, 8), (8, 16), (16, 16))])
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        out = []
        for stage in self.stages:
            x = stage(x)
            out.append(x)
        return out


torch.manual_seed(42)
np.random.seed(42)
rng = np.random.default_rng(0)
device = torch.device("cpu")
transformer = TransformerNet().to(device)
optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
mse_loss = torch.nn.MSELoss()
vgg = LossNet().to(device)
style = torch.from_numpy(rng.uniform(0, 255, (1, 3, 32, 32)).astype(np.float32))
style = style.repeat(2, 1, 1, 1).to(device)
features_style = vgg(normalize_batch(style))
gram_style = [gram_matrix(y) for y in features_style]
content_weight, style_weight = 1e5, 1e10

transformer.train()
for batch_id in range(3):
    x = torch.from_numpy(rng.uniform(0, 255, (2, 3, 32, 32)).astype(np.float32))
    n_batch = len(x)
    optimizer.zero_grad()
    x = x.to(device)
    y = transformer(x)
    y = normalize_batch(y)
    x = normalize_batch(x)
    features_y = vgg(y)
    features_x = vgg(x)
    content_loss = content_weight * mse_loss(features_y[1], features_x[1])
    style_loss = 0.
    for ft_y, gm_s in zip(features_y, gram_style):
        gm_y = gram_matrix(ft_y)
        style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
    style_loss *= style_weight
    total_loss = content_loss + style_loss
    total_loss.backward()
    optimizer.step()
    print("batch {}\tcontent: {:.6f}\tstyle: {:.6f}\ttotal: {:.6f}".format(
        batch_id + 1, content_loss.item(), style_loss.item(), total_loss.item()))
