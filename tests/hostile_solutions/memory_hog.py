"""Hostile: Allocate all memory in every call."""
def split_heads(x, h):
    hog = [bytearray(64 << 30)]
    return hog


def merge_heads(x):
    hog = [bytearray(64 << 30)]
    return hog


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    hog = [bytearray(64 << 30)]
    return hog


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    hog = [bytearray(64 << 30)]
    return hog


def multi_head_forward(query, key, value, weights, h, mask=None):
    hog = [bytearray(64 << 30)]
    return hog


def parameter_count(d_model, h, bias=True):
    hog = [bytearray(64 << 30)]
    return hog


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    hog = [bytearray(64 << 30)]
    return hog
