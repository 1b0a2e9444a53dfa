"""The transformer block and stack: values and gradients against torch.nn.TransformerEncoderLayer
(pre- and post-norm) and a stack built from torch.nn modules with the same weights; SwiGLU and
RMSNorm against their formulas; parameter counts against hand formulas and published configs
(GPT-2 small 124,439,808; LLaMA-2 7B and 70B from their configs) on the meta device."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import mha

ATOL64 = 1e-10  # float64: the two computations differ only in summation order


def randomize(m, seed, scale=0.3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * scale)
    return m


def copy_from_encoder_layer(block, layer):
    """Weights of nn.TransformerEncoderLayer into an mha.TransformerBlock, by role."""
    pairs = {"attn.in_proj_weight": "self_attn.in_proj_weight", "attn.in_proj_bias": "self_attn.in_proj_bias",
             "attn.out_proj.weight": "self_attn.out_proj.weight", "attn.out_proj.bias": "self_attn.out_proj.bias",
             "ffn.up.weight": "linear1.weight", "ffn.up.bias": "linear1.bias",
             "ffn.down.weight": "linear2.weight", "ffn.down.bias": "linear2.bias",
             "norm1.weight": "norm1.weight", "norm1.bias": "norm1.bias",
             "norm2.weight": "norm2.weight", "norm2.bias": "norm2.bias"}
    src = layer.state_dict()
    mine = block.state_dict()
    with torch.no_grad():
        for dst, s in pairs.items():
            if dst in mine:
                mine[dst].copy_(src[s])
    assert set(mine) <= set(pairs)  # nothing of the block left uncopied


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_block_equals_torch_encoder_layer(norm_first, activation, bias, causal):
    d, h, d_ff, T = 12, 3, 20, 6
    kw = dict(dtype=torch.float64)
    layer = nn.TransformerEncoderLayer(d, h, d_ff, dropout=0.0, activation=activation, batch_first=True,
                                       norm_first=norm_first, bias=bias, **kw)
    randomize(layer, seed=1)
    block = mha.TransformerBlock(d, h, d_ff, activation=activation, norm_first=norm_first, bias=bias, **kw)
    copy_from_encoder_layer(block, layer)
    x = torch.randn(2, T, d, dtype=torch.float64, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64) if causal else None
    ours = block(x, is_causal=causal)
    theirs = layer(x2, src_mask=mask, is_causal=causal)
    torch.testing.assert_close(ours, theirs, atol=ATOL64, rtol=0)
    grad = torch.randn(ours.shape, dtype=torch.float64)
    ours.backward(grad)
    theirs.backward(grad)
    torch.testing.assert_close(x.grad, x2.grad, atol=ATOL64, rtol=0)
    torch.testing.assert_close(block.ffn.up.weight.grad, layer.linear1.weight.grad, atol=ATOL64, rtol=0)
    torch.testing.assert_close(block.attn.in_proj_weight.grad, layer.self_attn.in_proj_weight.grad,
                               atol=ATOL64, rtol=0)
    torch.testing.assert_close(block.norm1.weight.grad, layer.norm1.weight.grad, atol=ATOL64, rtol=0)
    # the eval fast path of torch's layer too (fp64 is refused there; fp32 within 1e-5)
    layer32, block32 = layer.float().eval(), block.float().eval()
    with torch.no_grad():
        x32 = x.detach().float()
        torch.testing.assert_close(block32(x32, is_causal=causal),
                                   layer32(x32, src_mask=None if mask is None else mask.float(), is_causal=causal),
                                   atol=1e-5, rtol=0)


def test_swiglu_and_rmsnorm_are_their_formulas():
    # pre-norm LLaMA block without biases: h = x + Attn(RMS(x)·γ₁); y = h + (silu(RMS(h)·γ₂·W_gᵀ) ⊙ (…·W₁ᵀ))·W₂ᵀ
    d, h, g, d_ff, eps = 8, 4, 2, 12, 1e-6
    b = randomize(mha.TransformerBlock(d, h, d_ff, n_kv_heads=g, activation="swiglu", norm="rmsnorm", bias=False,
                                       norm_eps=eps, dtype=torch.float64), seed=2)
    x = torch.randn(2, 5, d, dtype=torch.float64)

    def rms(t, gamma):
        return t / torch.sqrt(t.pow(2).mean(-1, keepdim=True) + eps) * gamma

    a = rms(x, b.norm1.weight)
    hx = x + b.attn(a, a, a, is_causal=True, need_weights=False)[0]
    z = rms(hx, b.norm2.weight)
    ffn = (F.silu(z @ b.ffn.gate.weight.T) * (z @ b.ffn.up.weight.T)) @ b.ffn.down.weight.T
    torch.testing.assert_close(b(x, is_causal=True), hx + ffn, atol=ATOL64, rtol=0)


def _nn_gpt(model):
    """The same pre-norm GPT built from torch.nn modules, sharing model's weights."""
    blocks = model.blocks
    d, h = blocks[0].attn.d_model, blocks[0].attn.num_heads
    d_ff = blocks[0].ffn.up.out_features
    layers = []
    for blk in blocks:
        layer = nn.TransformerEncoderLayer(d, h, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True, dtype=torch.float64)
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(blk.attn.in_proj_weight)
            layer.self_attn.in_proj_bias.copy_(blk.attn.in_proj_bias)
            layer.self_attn.out_proj.load_state_dict(blk.attn.out_proj.state_dict())
            layer.linear1.load_state_dict(blk.ffn.up.state_dict())
            layer.linear2.load_state_dict(blk.ffn.down.state_dict())
            layer.norm1.load_state_dict(blk.norm1.state_dict())
            layer.norm2.load_state_dict(blk.norm2.state_dict())
        layers.append(layer)

    def forward(tokens):
        T = tokens.size(1)
        x = model.tok_emb.weight[tokens] + model.pos_emb.weight[:T]
        mask = nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
        for layer in layers:
            x = layer(x, src_mask=mask, is_causal=True)
        x = F.layer_norm(x, (d,), model.norm.weight, model.norm.bias)
        return x @ model.tok_emb.weight.T  # tied output layer
    return forward


def test_stack_equals_torch_nn_composition():
    model = randomize(mha.Transformer(50, 12, 3, 4, 24, max_len=16, dtype=torch.float64), seed=3)
    tokens = torch.randint(0, 50, (2, 9), generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(model(tokens), _nn_gpt(model)(tokens), atol=ATOL64, rtol=0)
    assert model.lm_head.weight is model.tok_emb.weight


def test_stack_decoding_with_kv_caches_equals_the_full_forward():
    model = randomize(mha.Transformer(40, 16, 2, 4, 32, max_len=12, n_kv_heads=2, activation="swiglu",
                                      norm="rmsnorm", bias=False, tie_embeddings=False), seed=5).eval()
    tokens = torch.randint(0, 40, (2, 10), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        full = model(tokens)
        caches = model.new_kv_caches(batch=2, max_len=10)
        steps = [model(tokens[:, :4], kv_caches=caches)]  # a prompt of 4, then one token at a time
        steps += [model(tokens[:, t:t + 1], kv_caches=caches) for t in range(4, 10)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    assert [c.length for c in caches] == [10, 10]


def block_params(d, h, g, d_ff, activation, norm, bias):
    """By hand: attention d·d (Q) + 2·d·g·d_k (K, V) + d·d (O), biases d + 2·g·d_k + d;
    FFN 2·d·d_ff (+ d·d_ff for the SwiGLU gate), biases d_ff (+ d_ff) + d;
    two norms: LayerNorm γ, β (2d), without bias γ (d); RMSNorm γ (d)."""
    dk = d // h
    attn = 2 * d * d + 2 * d * g * dk + (2 * d + 2 * g * dk if bias else 0)
    mats = 3 if activation == "swiglu" else 2
    ffn = mats * d * d_ff + ((mats - 1) * d_ff + d if bias else 0)
    norms = 2 * (2 * d if norm == "layernorm" and bias else d)
    return attn + ffn + norms


@pytest.mark.parametrize("activation", ["gelu", "swiglu"])
@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("g", [4, 2, 1])
def test_block_parameters_by_hand(activation, norm, bias, g):
    b = mha.TransformerBlock(16, 4, 40, n_kv_heads=g, activation=activation, norm=norm, bias=bias, device="meta")
    assert mha.count_parameters(b) == block_params(16, 4, g, 40, activation, norm, bias)


def test_gpt2_small_has_124_439_808_parameters():
    # vocab 50257, n_ctx 1024, d 768, 12 layers, 12 heads, d_ff 3072, biases, LayerNorm, tied output:
    # per block: LN 1536 + c_attn 768·2304 + 2304 = 1,771,776 + c_proj 590,592 + LN 1536
    #            + fc 768·3072 + 3072 = 2,362,368 + proj 3072·768 + 768 = 2,360,064  -> 7,087,872
    # wte 50257·768 = 38,597,376; wpe 1024·768 = 786,432; ln_f 1536
    # 12·7,087,872 + 38,597,376 + 786,432 + 1536 = 124,439,808 (the published GPT-2 small count)
    m = mha.Transformer(50257, 768, 12, 12, 3072, max_len=1024, activation="gelu_tanh", device="meta")
    assert mha.count_parameters(m) == 124_439_808
    assert mha.count_parameters(m.blocks[0]) == block_params(768, 12, 12, 3072, "gelu", "layernorm", True) \
        == 7_087_872
    untied = mha.Transformer(50257, 768, 12, 12, 3072, max_len=1024, tie_embeddings=False, device="meta")
    assert mha.count_parameters(untied) == 124_439_808 + 38_597_376


def test_llama2_7b_and_70b_from_their_configs():
    # LLaMA-2 7B: vocab 32000, d 4096, 32 layers, 32 heads (no GQA), d_ff 11008, SwiGLU, RMSNorm,
    # no biases, untied, rotary positions (no parameters):
    # block 4·4096² + 3·4096·11008 + 2·4096 = 67,108,864 + 135,266,304 + 8192 = 202,383,360
    # 32·202,383,360 + 2·32000·4096 + 4096 = 6,476,267,520 + 262,144,000 + 4096 = 6,738,415,616
    kw = dict(activation="swiglu", norm="rmsnorm", bias=False, tie_embeddings=False, device="meta")
    m7 = mha.Transformer(32000, 4096, 32, 32, 11008, **kw)
    assert mha.count_parameters(m7) == 6_738_415_616
    # LLaMA-2 70B: d 8192, 80 layers, 64 heads, 8 KV heads (d_k 128), d_ff 28672:
    # block 2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192 = 134,217,728 + 16,777,216 + 704,643,072 + 16,384
    #       = 855,654,400; 80·855,654,400 + 2·32000·8192 + 8192 = 68,452,352,000 + 524,288,000 + 8192
    m70 = mha.Transformer(32000, 8192, 80, 64, 28672, n_kv_heads=8, **kw)
    assert mha.count_parameters(m70.blocks[0]) == 855_654_400
    assert mha.count_parameters(m70) == 68_976_648_192


def test_errors():
    with pytest.raises(ValueError, match="activation must be one of"):
        mha.TransformerBlock(8, 2, 16, activation="tanh")
    with pytest.raises(ValueError, match="norm must be one of"):
        mha.TransformerBlock(8, 2, 16, norm="batchnorm")
    m = mha.Transformer(10, 8, 1, 2, 16, max_len=4)
    with pytest.raises(ValueError, match="tokens must be a \\(batch, n\\) tensor of int64"):
        m(torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match="exceed max_len 4"):
        m(torch.zeros(1, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="one cache per layer"):
        m(torch.zeros(1, 2, dtype=torch.long), kv_caches=[])
