"""tpsim.cases.extract: the [[cases]] tables taken out of a scenario's text, every other line
kept byte for byte at its number, and problems named with their key, line and column."""

import pytest

import tpsim
from tpsim.cases import extract
from tpsim.sweep import _sweep_lines


def test_cases_between_other_tables_leave_every_other_line_in_place():
    text = ('# top\nseed = 1  # c\n[simulation]\nduration = "10s"\n\n'
            '[[cases]]\nname = "a"   # n\n"flows.0.transport" = "tcp"\n"flows.0.app" = { kind = "bulk", bytes = [\n  "2MB"] }\n\n'
            '[sweep]\n"x.y" = [1, 2]\n'
            '[[ cases ]]\ns = """\n[[cases]]\n"""\n# a comment after the last case\n')
    out, cases = extract(text, "f.toml")
    assert out == '# top\nseed = 1  # c\n[simulation]\nduration = "10s"\n\n' + "\n" * 6 + '[sweep]\n"x.y" = [1, 2]\n' + "\n" * 5
    assert [c.name for c in cases] == ["a", "s=[[cases]]\n"]
    assert [c.line for c in cases] == [6, 14]
    assert cases[0].settings == [("flows.0.transport", "tcp", 8, 1), ("flows.0.app", {"kind": "bulk", "bytes": ["2MB"]}, 9, 1)]
    assert cases[1].settings == [("s", "[[cases]]\n", 15, 1)]


def test_columns_count_characters_and_crlf_lines_are_kept():
    out, cases = extract('[[cases]]\n"é.ü" = 1\n  "ключ" = "значение"\n', "f.toml")
    assert cases[0].settings == [("é.ü", 1, 2, 1), ("ключ", "значение", 3, 3)]
    out, cases = extract('[simulation]\r\nduration = "10s"\r\n[[cases]]\r\n"a.b" = 1\r\n', "f.toml")
    assert out.startswith('[simulation]\r\nduration = "10s"\r\n') and out.count("\n") == 4
    assert cases[0].settings == [("a.b", 1, 4, 1)]


@pytest.mark.parametrize("text, message", [
    ('x = 1\n  cases = [{a = 1}]\n', "f.toml:2:3: key `cases`: write cases as [[cases]] tables, one per case"),
    ('[[cases]]\na = 1\n[cases.sub]\nb = 2\n', "f.toml:3:1: key `cases.sub`: a case is one [[cases]] table"),
    ('[[cases]]\n"é" = 1\n  name = 3\n', "f.toml:3:3: key `cases.0.name`: a case's name is a non-empty string"),
    ('[[cases]]\nname = "a"\n\n[[cases]]\nname = "a"\n', "f.toml:4:1: key `cases.1`: two cases are named 'a'"),
])
def test_a_bad_case_is_named_with_its_key_and_place(text, message):
    with pytest.raises(tpsim.ScenarioError) as e:
        extract(text, "f.toml")
    assert str(e.value).startswith(message)


def test_text_without_cases_or_not_toml_is_left_to_the_engine():
    for text in ('[simulation]\nname = "cases"\n', '[[cases]]\na = \n'):
        assert extract(text, "f.toml") == (text, [])


def test_sweep_keys_are_placed():
    class Base:
        text = '[simulation]\nseed = 1\n[sweep]\n# comment\n"flows.0.dst" = [1, 2]\n  links.0.delay = ["1ms"]\n'

    assert _sweep_lines(Base()) == {"flows.0.dst": (5, 1), "links.0.delay": (6, 3)}
