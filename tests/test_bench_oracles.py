"""The per-language staleness harness's own logic (bench/languages.py, bench/oracles): names, contents, grading.

Only what runs without ruby / php / libclang / ctags: the PHP structure finder on a token list, bash's
``declare -f`` printout split into functions, the Swift / Scala structure finder (Pygments, a runtime
dependency), the moved check's name blanking and the precision / recall arithmetic beside the file baseline.
"""

from __future__ import annotations

import pytest

from bench.languages import Row, anonymous, summarize
from bench.oracles.code import SEP, php_structure
from bench.oracles.sss import bash_canonical, structure


def _php(src: list[str]) -> list[tuple[str | None, str]]:
    """A token list as token_get_all gives it (kind names only where the finder looks at them)."""
    kinds = {"class": "T_CLASS", "function": "T_FUNCTION", "public": "T_PUBLIC", "static": "T_STATIC",
             "new": "T_NEW", " ": "T_WHITESPACE", "/** d */": "T_DOC_COMMENT", "#[": "T_ATTRIBUTE"}
    return [(kinds.get(t), t) for t in src]


def test_php_names_methods_under_their_class_and_leaves_out_anonymous_classes_and_closures() -> None:
    toks = _php(["class", " ", "C", " ", "{", "/** d */", "#[", "A", "]", "public", " ", "static", " ", "function",
                 " ", "f", "(", ")", "{", "$x", "=", "new", " ", "class", "{", "function", " ", "z", "(", ")", "{",
                 "}", "}", ";", "$g", "=", "function", "(", ")", "{", "}", ";", "}", "}",
                 "function", " ", "top", "(", ")", "{", "}", "function", " ", "top", "(", ")", "{", "}"])
    out = php_structure(toks)
    assert set(out) == {"C", "C.f", "top", "top#2"}
    # the attribute and the modifiers belong to the method, the doc comment and whitespace do not
    assert out["C.f"].split(SEP)[:6] == ["#[", "A", "]", "public", "static", "function"]


def test_bash_printout_is_split_into_flat_numbered_functions() -> None:
    printout = ("__gitmem_oracle_wrap () \n{ \n    a () \n    { \n        echo 1;\n        inner () \n        { \n"
                "            :\n        }\n    };\n    a () \n    { \n        echo 2\n    }\n}\n")
    out = bash_canonical(printout)
    assert set(out) == {"a", "inner", "a#2"}
    assert out["a#2"] == "a () \n{ \n    echo 2\n}"
    assert out["inner"].startswith("inner () \n{ \n")


def test_swift_members_of_an_extension_nest_under_the_type_and_overloads_are_left_out() -> None:
    src = ("struct S {\n    @discardableResult\n    public func f(_ a: Int) -> Int {\n        a // c\n    }\n"
           "    var x: Int { 1 }\n}\n\nextension S {\n    func g() {}\n"
           "    func h(a: Int) {}\n    func h(b: Int) {}\n}\n")
    out = structure(src, "swift")
    assert set(out) == {"S", "S.f", "S.x", "S.g"}
    assert out["S.f"].split(SEP)[:4] == ["@", "discardableResult", "public", "func"]
    assert "c" not in out["S.f"].split(SEP)  # comments are not tokens


def test_scala_companion_object_is_dollar_named_its_members_not_and_a_head_may_continue_at_column_zero() -> None:
    src = ("class A(x: Int)\nextends B {\n  def f = s\"${x} )\"\n}\nobject A {\n  val y = 1\n}\n"
           "object Lone {\n  def g(a: Int): Int =\n    a + 1\n}\n")
    out = structure(src, "scala")
    assert set(out) == {"A", "A.f", "A$", "A.y", "Lone", "Lone.g"}
    assert out["A"].split(SEP)[-1] == "}" and "extends" in out["A"].split(SEP)
    assert out["Lone.g"].split(SEP)[-3:] == ["a", "+", "1"]  # an expression body ends with its layout


def test_moved_check_blanks_the_own_name_only() -> None:
    assert anonymous(SEP.join(["def", "f", "(", ")", "f2", "f"]), "A.f(int)#2") == SEP.join(
        ["def", "\x00", "(", ")", "f2", "\x00"])


def test_precision_and_recall_beside_the_file_baseline() -> None:
    rows = [Row(0, "o", "l", "p", "a", "f", status="stale", verdict="changed", file_changed=True),
            Row(0, "o", "l", "p", "b", "f", status="fresh", verdict="unchanged", file_changed=True),
            Row(0, "o", "l", "p", "c", "f", status="stale", verdict="unchanged", file_changed=True),
            Row(0, "o", "l", "q", "d", "f", status="fresh", verdict="changed", file_changed=True),
            Row(0, "o", "l", "q", "e", "f", status="fresh", verdict="unmapped", file_changed=False),
            Row(0, "o", "l", "q", "g", "f", status="moved", verdict="missing", file_changed=True, moved_ok=True)]
    s = summarize(rows, "x", "test")
    assert (s["graded"], s["changed"]) == (4, 2)
    assert s["gitmem"]["precision"] == pytest.approx(0.5) and s["gitmem"]["recall"] == pytest.approx(0.5)
    assert s["file_baseline"]["precision"] == pytest.approx(0.5) and s["file_baseline"]["recall"] == 1.0
    assert s["excluded"] == {"unmapped": 1} and s["moved"] == {"gitmem_moved": 1, "checked": 1, "agreed": 1}
