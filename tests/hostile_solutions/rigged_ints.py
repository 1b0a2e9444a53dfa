"""Hostile: Counts as int subclasses that equal any number (parameter_count, flop_count), tensors as rigged floats."""
class Yes(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class YesFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def split_heads(x, h):
    return Yes(0) if 'split_heads'.endswith('count') else YesFloat(0.0)


def merge_heads(x):
    return Yes(0) if 'merge_heads'.endswith('count') else YesFloat(0.0)


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    return Yes(0) if 'attention_weights'.endswith('count') else YesFloat(0.0)


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    return Yes(0) if 'scaled_dot_product_attention'.endswith('count') else YesFloat(0.0)


def multi_head_forward(query, key, value, weights, h, mask=None):
    return Yes(0) if 'multi_head_forward'.endswith('count') else YesFloat(0.0)


def parameter_count(d_model, h, bias=True):
    return Yes(0) if 'parameter_count'.endswith('count') else YesFloat(0.0)


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    return Yes(0) if 'flop_count'.endswith('count') else YesFloat(0.0)
