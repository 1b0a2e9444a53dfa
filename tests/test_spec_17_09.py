"""The second subject, spec/17-09.yaml (the transformer block): every verdict as its author expects, with
the figures derived by hand in the comments (published configurations: GPT-2's hparams, Llama 2's
config.json)."""
import json

from grader.claims.load import load_subject
from grader.claims.run import run_subject


def test_the_transformer_block_subject():
    s = load_subject("spec/17-09.yaml")
    assert s.id == "17-09" and len(s.claims) == 14
    r = {x.claim.id: x for x in run_subject(s, device="cpu").results}
    assert all(x.ok for x in r.values()), {k: (v.verdict, v.evidence) for k, v in r.items() if not v.ok}
    assert [k for k, v in r.items() if v.verdict == "refuted"] == ["gpt2-117m", "gpt2-345m", "gpt2-1542m"]
    ev = {k: json.dumps([c.summary for c in v.checks], ensure_ascii=False) for k, v in r.items()}
    # GPT-2 small: 50257·768 + 1024·768 + 12·(12·768² + 13·768) + 2·768 = 124,439,808
    assert "124,439,808" in ev["gpt2-117m"]
    # 24 layers of 1024: 50257·1024 + 1024·1024 + 24·(12·1024² + 13·1024) + 2·1024 = 354,823,168
    assert "354,823,168" in ev["gpt2-345m"]
    # 48 layers of 1600: 80,411,200 + 1,638,400 + 48·30,740,800 + 3,200 = 1,557,611,200
    assert "1,557,611,200" in ev["gpt2-1542m"]
    # Llama 2 7B: 32·(4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096 = 6,738,415,616
    assert "6,738,415,616" in ev["llama2-7b-size"]
    # 70B: 80·(2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192) + 2·32000·8192 + 8192 = 68,976,648,192
    assert "68,976,648,192" in ev["llama2-70b-size"]
    # KV cache a token at fp16: 2·80·8·128·2 = 327,680 (GQA); ×4096 tokens = 1,342,177,280 = 1.25 GiB
    assert "327,680" in ev["llama2-70b-gqa-cache"] and "1,342,177,280" in ev["llama2-70b-gqa-cache"]
    assert "ratio left/right = 8" in ev["llama2-70b-gqa-cache"]
    assert "Var(q·k) = d_k·Var(q_1 k_1) = d_k" in ev["v-variance"]
