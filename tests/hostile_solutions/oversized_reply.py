"""Hostile: Announce a 4 GiB reply on the reply pipe in every call."""
import json
import os
import struct
import sys

REP = json.loads(sys.argv[1])["rep"]


def split_heads(x, h):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def merge_heads(x):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def multi_head_forward(query, key, value, weights, h, mask=None):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def parameter_count(d_model, h, bias=True):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    os.write(REP, struct.pack('>II', 100, 0xFFFFFFF0))
    return 0
