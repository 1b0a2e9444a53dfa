"""Hostile: Phone home: connect out, and to local sockets of the host, to fetch the expected outputs."""
import socket

GOT = b""
for family, address in [(socket.AF_INET, ("127.0.0.1", 8000)), (socket.AF_INET, ("1.1.1.1", 80)),
                        (socket.AF_UNIX, "/run/systemd/private"), (socket.AF_UNIX, "/var/run/docker.sock")]:
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(1)
        s.connect(address)
        GOT += s.recv(100)
    except OSError:
        pass


def split_heads(x, h):
    raise ConnectionError(f'got {len(GOT)} bytes')


def merge_heads(x):
    raise ConnectionError(f'got {len(GOT)} bytes')


def attention_weights(Q, K, mask=None, dropout_p=0.0, training=False):
    raise ConnectionError(f'got {len(GOT)} bytes')


def scaled_dot_product_attention(Q, K, V, mask=None, dropout_p=0.0, training=False):
    raise ConnectionError(f'got {len(GOT)} bytes')


def multi_head_forward(query, key, value, weights, h, mask=None):
    raise ConnectionError(f'got {len(GOT)} bytes')


def parameter_count(d_model, h, bias=True):
    raise ConnectionError(f'got {len(GOT)} bytes')


def flop_count(n_q, d_model, h, n_k=None, batch=1):
    raise ConnectionError(f'got {len(GOT)} bytes')
