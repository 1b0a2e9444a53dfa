"""Hostile: A tensor subclass that reports whatever shape it is compared with and equals everything."""
import torch


class Shapeshifter(torch.Tensor):
    def __eq__(self, other):
        return torch.ones((), dtype=torch.bool)

    @property
    def shape(self):
        return _Any()


class _Any(tuple):
    def __eq__(self, other):
        return True


def split_heads(x, h):
    return torch.zeros(1).as_subclass(Shapeshifter)


def merge_heads(x):
    return torch.zeros(1).as_subclass(Shapeshifter)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return torch.zeros(1).as_subclass(Shapeshifter)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return torch.zeros(1).as_subclass(Shapeshifter)


def multi_head_forward(query, key, value, weights, h, mask=None):
    return torch.zeros(1).as_subclass(Shapeshifter)


def parameter_count(d_model, h, bias=True):
    return torch.zeros(1).as_subclass(Shapeshifter)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return torch.zeros(1).as_subclass(Shapeshifter)
