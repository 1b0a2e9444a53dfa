"""A problem's rubric (grader/bank/rubric.py): read from the bank, every mistake located, the
score its applied items give clamped to [0, cap]."""
import textwrap

import pytest

from grader.bank import load_bank
from grader.errors import ErrorList

HEAD = """subject: 17-08
problems:
  - id: 17-08/essay
    prompt: "Why W^O?"
    kind: free_text
    points: 2
    reference: "It mixes the heads."
"""


def _bank(tmp_path, rubric: str):
    f = tmp_path / "bank.yaml"
    f.write_text(HEAD + textwrap.indent(textwrap.dedent(rubric), "    "))
    return f


def test_a_rubric_is_read_and_scores_clamped(tmp_path):
    f = _bank(tmp_path, """\
        rubric:
          cap: 1.5
          items:
            - {id: a, text: "mixes the heads", points: 1}
            - {id: b, text: "names d", points: 1}
            - {id: c, text: "wrong claim", points: -2}
        """)
    p = load_bank(f).get("17-08/essay")
    assert [(i.id, i.points) for i in p.rubric.items] == [("a", 1.0), ("b", 1.0), ("c", -2.0)]
    assert p.rubric.score(["a", "b"], p.points) == 1.5        # 2, clamped to the cap 1.5
    assert p.rubric.score(["a", "c"], p.points) == 0          # -1, clamped to 0
    assert p.rubric.score(["b"], p.points) == 1
    with pytest.raises(KeyError):
        p.rubric.score(["z"], p.points)


def test_without_a_cap_the_problems_points_bound_it(tmp_path):
    f = _bank(tmp_path, """\
        rubric:
          items:
            - {id: a, text: "one", points: 1.5}
            - {id: b, text: "two", points: 1.5}
        """)
    p = load_bank(f).get("17-08/essay")
    assert p.rubric.cap is None and p.rubric.score(["a", "b"], p.points) == 2     # 3, clamped to 2 points


def test_every_rubric_mistake_is_located(tmp_path):
    f = _bank(tmp_path, """\
        rubric:
          cap: 5
          colour: red
          items:
            - {id: a, text: "one", points: 1}
            - {id: a, text: "again", points: 1}
            - {id: b, text: "nan", points: .nan}
            - {id: c, text: "", points: 1}
            - {id: d, txt: "typo", points: 1}
        """)
    with pytest.raises(ErrorList) as info:
        load_bank(f)
    text = str(info.value)
    for expected, line in (("'rubric.cap' must be a finite number from 0 to the problem's 2 points", 9),
                           ("unknown key 'colour' in 'rubric'", 10),
                           ("duplicate rubric item id 'a'", 13),
                           ("'points' must be a finite number", 14),
                           ("needs its 'text'", 15),
                           ("unknown key 'txt' in a rubric item", 16)):
        assert any(f"bank.yaml:{line}:" in ln and expected in ln for ln in text.splitlines()), (expected, line, text)
