#!/usr/bin/env python3
"""Writes the per-model shape files of kernels/shapes/ from the layer tables in
shared/reference/models_and_recipes.md (CaffeNet, AlexNet, GoogLeNet, CIFAR-10 quick/full,
ResNet-50 v1.5, VGG-16, the DEEPEX CVAE). Every line is `<op> <descriptor>`; a layer that occurs
k times in the network ends its name with `*k`. kernels/conv/shapes_test.cpp checks that the
lines add up to the published forward multiply-accumulate counts.

Run: python3 kernels/shapes/generate_shapes.py [--mb 16]   (writes the files next to this script)
"""

import argparse
import collections
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def conv(mb, ic, ih, oc, k, s=1, p=0, g=1, name="", op="conv2d"):
    d = f"g{g}" if g > 1 else ""
    return f"{op} {d}mb{mb}ic{ic}ih{ih}oc{oc}kh{k}sh{s}ph{p}_n{name}"


def fc(mb, ic, oc, name):
    return f"fc mb{mb}ic{ic}oc{oc}_n{name}"


def dedupe(model, lines):
    """Collapses identical layers into one line named '<model>:<first name>*<count>'."""
    counts = collections.OrderedDict()
    for line in lines:
        op, desc = line.split(" ")
        key, name = desc.split("_n")
        k = (op, key)
        if k not in counts:
            counts[k] = [name, 0]
        counts[k][1] += 1
    return [f"{op} {key}_n{model}:{name}*{c}" for (op, key), (name, c) in counts.items()]


def caffenet(mb):
    # BVLC reference CaffeNet (AlexNet has the same conv/FC shapes; only LRN/pool order differs)
    return [
        conv(mb, 3, 227, 96, 11, s=4, name="conv1"),
        conv(mb, 96, 27, 256, 5, p=2, g=2, name="conv2"),
        conv(mb, 256, 13, 384, 3, p=1, name="conv3"),
        conv(mb, 384, 13, 384, 3, p=1, g=2, name="conv4"),
        conv(mb, 384, 13, 256, 3, p=1, g=2, name="conv5"),
        fc(mb, 9216, 4096, "fc6"),
        fc(mb, 4096, 4096, "fc7"),
        fc(mb, 4096, 1000, "fc8"),
    ]


def googlenet(mb):
    L = [
        conv(mb, 3, 224, 64, 7, s=2, p=3, name="conv1/7x7_s2"),
        conv(mb, 64, 56, 64, 1, name="conv2/3x3_reduce"),
        conv(mb, 64, 56, 192, 3, p=1, name="conv2/3x3"),
    ]
    blocks = [
        ("3a", 192, 28, (64, 96, 128, 16, 32, 32)),
        ("3b", 256, 28, (128, 128, 192, 32, 96, 64)),
        ("4a", 480, 14, (192, 96, 208, 16, 48, 64)),
        ("4b", 512, 14, (160, 112, 224, 24, 64, 64)),
        ("4c", 512, 14, (128, 128, 256, 24, 64, 64)),
        ("4d", 512, 14, (112, 144, 288, 32, 64, 64)),
        ("4e", 528, 14, (256, 160, 320, 32, 128, 128)),
        ("5a", 832, 7, (256, 160, 320, 32, 128, 128)),
        ("5b", 832, 7, (384, 192, 384, 48, 128, 128)),
    ]
    for name, cin, hw, (c1, r3, c3, r5, c5, pp) in blocks:
        n = f"inception_{name}"
        L += [
            conv(mb, cin, hw, c1, 1, name=f"{n}/1x1"),
            conv(mb, cin, hw, r3, 1, name=f"{n}/3x3_reduce"),
            conv(mb, r3, hw, c3, 3, p=1, name=f"{n}/3x3"),
            conv(mb, cin, hw, r5, 1, name=f"{n}/5x5_reduce"),
            conv(mb, r5, hw, c5, 5, p=2, name=f"{n}/5x5"),
            conv(mb, cin, hw, pp, 1, name=f"{n}/pool_proj"),
        ]
    L.append(fc(mb, 1024, 1000, "loss3/classifier"))
    return L


def cifar10(mb, full):
    L = [
        conv(mb, 3, 32, 32, 5, p=2, name="conv1"),
        conv(mb, 32, 16, 32, 5, p=2, name="conv2"),
        conv(mb, 32, 8, 64, 5, p=2, name="conv3"),
    ]
    return L + ([fc(mb, 1024, 10, "ip1")] if full else [fc(mb, 1024, 64, "ip1"), fc(mb, 64, 10, "ip2")])


def resnet50(mb):
    L = [conv(mb, 3, 224, 64, 7, s=2, p=3, name="conv1")]
    cin, hw = 64, 56
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            n = f"layer{stage}.{b}"
            L.append(conv(mb, cin, hw, width, 1, name=f"{n}.conv1"))
            L.append(conv(mb, width, hw, width, 3, s=s, p=1, name=f"{n}.conv2"))  # v1.5: stride on 3x3
            out_hw = hw // s
            L.append(conv(mb, width, out_hw, width * 4, 1, name=f"{n}.conv3"))
            if b == 0:
                L.append(conv(mb, cin, hw, width * 4, 1, s=s, name=f"{n}.downsample"))
            cin, hw = width * 4, out_hw
    return L + [fc(mb, 2048, 1000, "fc")]


def vgg16(mb):
    L, cin, hw = [], 3, 224
    for block, (cout, n) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], 1):
        for i in range(n):
            L.append(conv(mb, cin, hw, cout, 3, p=1, name=f"conv{block}_{i + 1}"))
            cin = cout
        hw //= 2
    return L + [fc(mb, 25088, 4096, "fc6"), fc(mb, 4096, 4096, "fc7"), fc(mb, 4096, 1000, "fc8")]


def cvae(mb):
    # DEEPEX CVAE: 3 conv 3x3 'same' (1->128->128->128) at 28x28, dense 100352->128, latent 3,
    # mirrored decoder; a stride-1 ConvTranspose(Cin->Cout) is conv2d_bwd_data of a conv Cout->Cin.
    return [
        conv(mb, 1, 28, 128, 3, p=1, name="enc.conv1"),
        conv(mb, 128, 28, 128, 3, p=1, name="enc.conv2"),
        conv(mb, 128, 28, 128, 3, p=1, name="enc.conv3"),
        fc(mb, 100352, 128, "enc.dense"),
        fc(mb, 128, 3, "z_mean"),
        fc(mb, 128, 3, "z_log_var"),
        fc(mb, 3, 128, "dec.dense1"),
        fc(mb, 128, 100352, "dec.dense2"),
        conv(mb, 128, 28, 128, 3, p=1, name="dec.deconv1", op="conv2d_bwd_data"),
        conv(mb, 128, 28, 128, 3, p=1, name="dec.deconv2", op="conv2d_bwd_data"),
        conv(mb, 1, 28, 128, 3, p=1, name="dec.out", op="conv2d_bwd_data"),
    ]


MODELS = {
    "caffenet": (caffenet, "BVLC reference CaffeNet, 3x227x227 (seed 002)"),
    "alexnet": (caffenet, "BVLC AlexNet: the same conv/FC shapes as CaffeNet (seed 002)"),
    "googlenet": (googlenet, "BVLC GoogLeNet deploy graph (no aux heads), 3x224x224 (seed 002)"),
    "cifar10_quick": (lambda mb: cifar10(mb, False), "Caffe cifar10_quick, 3x32x32 (seed 002)"),
    "cifar10_full": (lambda mb: cifar10(mb, True), "Caffe cifar10_full / cuda-convnet 18pct (seed 002)"),
    "resnet50": (resnet50, "torchvision ResNet-50 v1.5, 3x224x224 (seeds 003, 004)"),
    "vgg16": (vgg16, "torchvision VGG-16 (cfg D), 3x224x224 (seed 001)"),
    "cvae": (cvae, "DEEPEX protein-folding CVAE, 1x28x28, latent 3 (seed 004)"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=16, help="batch in the descriptors (default 16)")
    args = ap.parse_args()
    for model, (fn, title) in MODELS.items():
        lines = dedupe(model, fn(args.mb))
        with open(os.path.join(HERE, f"{model}.txt"), "w") as f:
            f.write(f"# {title}: conv and FC layers, batch {args.mb}.\n")
            f.write("# Generated by generate_shapes.py; '*k' ends the name of a layer that occurs k times.\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
