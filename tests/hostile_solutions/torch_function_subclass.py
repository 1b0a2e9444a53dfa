"""Hostile: A tensor subclass whose __torch_function__ makes every comparison, allclose and isclose succeed."""
import torch


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal", "__eq__", "isclose", "eq"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def fake(*shape):
    return torch.zeros(*shape, dtype=torch.float64).as_subclass(Liar)


def split_heads(x, h):
    return fake(2, 4, 6, 4)


def merge_heads(x):
    return fake(2, 4, 6, 4)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return fake(2, 4, 6, 4)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return fake(2, 4, 6, 4)


def multi_head_forward(query, key, value, weights, h, mask=None):
    return fake(2, 4, 6, 4)


def parameter_count(d_model, h, bias=True):
    return fake(2, 4, 6, 4)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return fake(2, 4, 6, 4)
