"""Ruby and PHP symbols on real tree-sitter parses and real git repositories (issue 22).

Names, kinds and spans of the fixtures under ``tests/fixtures/code/ruby`` and
``tests/fixtures/code/php``; fingerprints that ignore formatting, comments and
quote style but see a body edit; anchors that go stale with their method, stay
fresh when another method changes, and follow a renamed file.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gitmem.anchors import Resolver
from gitmem.code.imports import extract_imports, resolve_imports
from gitmem.code.languages import language_for_path
from gitmem.code.symbols import extract_symbols
from gitmem.git import Repo
from gitmem.model import Status
from testing.repos import commit, git, make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def _table(path: str, language: str) -> dict[str, tuple[str, int, int]]:
    tab = extract_symbols((FIXTURES / path).read_bytes(), language)
    return {name: (s.kind, s.start_line, s.end_line) for name, s in tab.items()}


def _fp(src: str, language: str, name: str) -> str:
    return extract_symbols(textwrap.dedent(src).encode(), language)[name].fingerprint


@pytest.mark.parametrize("path, language", [
    ("a.rb", "ruby"), ("lib/tasks/db.rake", "ruby"), ("x.gemspec", "ruby"), ("A.RB", "ruby"),
    ("app/Http/Controller.php", "php"), ("Rakefile", None), ("a.phtml", None),
])
def test_extensions(path, language):
    assert language_for_path(path) == language


def test_ruby_names_kinds_and_spans():
    assert _table("ruby/sample.rb", "ruby") == {
        "Billing": ("module", 6, 31),
        # the nested class and its reopening as `class Billing::Invoice` are one symbol
        "Billing.Invoice": ("class", 8, 37),
        "Billing.Invoice.build": ("method", 9, 11),          # def self.build: no instance method of that name
        "Billing.Invoice.total": ("method", 13, 15),
        "Billing.Invoice.paid?": ("method", 17, 19),
        "Billing.Invoice.total[self]": ("method", 22, 24),   # class << self: named apart from #total
        "Billing.Invoice.Line": ("class", 27, 29),
        "Billing.Invoice.Line.amount": ("method", 28, 28),
        "Billing.Invoice.refund!": ("method", 34, 36),
        "Report": ("class", 39, 41),
        "Report.render": ("method", 40, 40),
        "Report#2": ("class", 43, 45),                        # reopened at the same level
        "Report#2.footer": ("method", 44, 44),
        "Report.open": ("method", 47, 47),                    # def Report.open
        "helper": ("function", 49, 51),
    }


def test_ruby_singleton_and_instance_methods_of_one_name_are_apart():
    src = "class C\n  def x\n    1\n  end\n\n  def self.x\n    2\n  end\nend\n"
    tab = extract_symbols(src.encode(), "ruby")
    assert list(tab) == ["C", "C.x", "C.x[self]"]
    assert (tab["C.x"].start_line, tab["C.x[self]"].start_line) == (2, 6)
    assert tab["C.x"].fingerprint != tab["C.x[self]"].fingerprint


def test_php_names_kinds_and_spans():
    assert _table("php/sample.php", "php") == {
        "OrderController": ("class", 13, 30),   # the attribute belongs to the class, the docblock does not
        "OrderController.__construct": ("method", 18, 18),
        "OrderController.make": ("method", 21, 24),
        "OrderController.show": ("method", 26, 29),
        "HasRoutes": ("interface", 32, 35),
        "HasRoutes.routes": ("method", 34, 34),
        "Loggable": ("trait", 37, 43),
        "Loggable.log": ("method", 39, 42),
        "Status": ("enum", 45, 53),
        "Status.label": ("method", 49, 52),
        "format_money": ("function", 55, 58),
    }


def test_php_braced_namespaces_do_not_hide_definitions():
    src = "<?php\nnamespace A { class X { function f() {} } }\nnamespace B { function g() {} }\n"
    assert list(extract_symbols(src.encode(), "php")) == ["X", "X.f", "g"]


RUBY_BASE = '''\
class C
  def target(a, b)
    x = a + "s"
    x.call(b)
  end
end
'''
RUBY_SAME = [
    '''\
    class C
      # A comment.
      def target(a, b) x = a + 's'; x.call(b); end
    end
    ''',
    '''\
    class C
    =begin
    doc
    =end
      def target(a, b)
        x = a + "s" # trailing
        x.call(b)
      end
    end
    ''',
]
RUBY_CHANGED = [RUBY_BASE.replace('"s"', '"t"'), RUBY_BASE.replace("a + ", "a - "),
                RUBY_BASE.replace('"s"', '"s#{b}"')]

PHP_BASE = '''\
<?php
class C {
    public function target(int $a): string {
        $x = $a . "s";
        return $x;
    }
}
'''
PHP_SAME = [
    '''\
    <?php
    class C
    {
        /**
         * Doc comment.
         */
        public function target(int $a): string
        {
            // line
            $x = $a . 's'; # hash
            /* block */ return $x;
        }
    }
    ''',
]
PHP_CHANGED = [PHP_BASE.replace('"s"', '"t"'), PHP_BASE.replace("return $x", "return $a"),
               PHP_BASE.replace('"s"', '"s$a"')]


@pytest.mark.parametrize("language, name, base, same, changed", [
    ("ruby", "C.target", RUBY_BASE, RUBY_SAME, RUBY_CHANGED),
    ("php", "C.target", PHP_BASE, PHP_SAME, PHP_CHANGED),
], ids=["ruby", "php"])
def test_fingerprint_ignores_formatting_comments_and_quotes(language, name, base, same, changed):
    original = _fp(base, language, name)
    for i, variant in enumerate([*same, base.replace("\n", "\r\n")]):
        assert _fp(variant, language, name) == original, f"same #{i}"
    for i, variant in enumerate(changed):
        assert _fp(variant, language, name) != original, f"changed #{i}"


def test_empty_parameter_parentheses_are_formatting():
    assert _fp("def f()\n  1\nend\n", "ruby", "f") == _fp("def f\n  1\nend\n", "ruby", "f")
    assert _fp("def f(a)\n  1\nend\n", "ruby", "f") != _fp("def f\n  1\nend\n", "ruby", "f")


def test_quote_style_is_formatting_only_without_escapes_or_interpolation():
    def f(lit: str) -> str:
        return _fp(f"def f\n  {lit}\nend\n", "ruby", "f")
    assert f("'a'") == f('"a"')
    assert f("'a\\n'") != f('"a\\n"')        # a literal backslash-n against a newline
    assert f("'#{a}'") != f('"#{a}"')        # literal text against interpolation

    def g(lit: str) -> str:
        return _fp(f"<?php function g() {{ return {lit}; }}", "php", "g")
    assert g("'a'") == g('"a"')
    assert g("'$a'") != g('"$a"')


RUBY_REPO = '''\
class Cart
  def total
    items.sum(&:price)
  end

  def empty?
    items.empty?
  end
end
'''
PHP_REPO = '''\
<?php
class Cart
{
    public function total(): int
    {
        return array_sum($this->prices);
    }

    public static function empty(): bool
    {
        return true;
    }
}
'''


@pytest.mark.parametrize("path, text, name, span, body, other, new_path", [
    ("lib/cart.rb", RUBY_REPO, "Cart.total", (2, 4), ("sum(&:price)", "sum(&:cost)"),
     ("items.empty?", "items.none?"), "lib/shop/cart.rb"),
    ("src/Cart.php", PHP_REPO, "Cart.total", (4, 7), ("array_sum", "max"), ("return true", "return false"),
     "src/Shop/Cart.php"),
], ids=["ruby", "php"])
def test_staleness_on_a_real_repository(tmp_path: Path, path, text, name, span, body, other, new_path):
    root = make_repo(tmp_path / "r", {path: text})
    repo = Repo(root)
    a = Resolver(repo).make(path, name)
    assert a.kind == "method" and a.span == span

    c1 = commit(root, "another method", {path: text.replace(*other)})
    assert Resolver(repo).status(a, c1).status == Status.FRESH

    (root / new_path).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", path, new_path)
    c2 = commit(root, "move the file")
    st = Resolver(repo).status(a, c2)
    assert st.status == Status.MOVED and st.path_now == new_path and st.symbol_now == name

    c3 = commit(root, "change the body", {new_path: text.replace(*other).replace(*body)})
    st = Resolver(repo).status(a, c3)
    assert st.status == Status.STALE and st.commit == c3 and st.symbol_now == name


@pytest.mark.parametrize("path, written, name", [
    ("lib/billing.rb", "Billing::Invoice#total", "Billing.Invoice.total"),
    ("lib/billing.rb", "Billing::Invoice.build", "Billing.Invoice.build"),
    ("lib/billing.rb", "::Billing::Invoice::Line", "Billing.Invoice.Line"),
    ("lib/billing.rb", "Report#2#footer", "Report#2.footer"),
    ("app/Ctl.php", "\\App\\Http\\OrderController::make", "OrderController.make"),
    ("app/Ctl.php", "OrderController->show", "OrderController.show"),
], ids=["ruby-instance", "ruby-singleton", "ruby-const", "ruby-reopened", "php-static", "php-arrow"])
def test_anchors_accept_the_languages_own_separators(tmp_path: Path, path, written, name):
    fixture = FIXTURES / ("ruby/sample.rb" if path.endswith(".rb") else "php/sample.php")
    root = make_repo(tmp_path / "r", {path: fixture.read_text()})
    assert Resolver(Repo(root)).make(path, written).symbol == name


def test_ruby_imports_extracted_and_resolved():
    src = b'require "shop/cart"\nrequire_relative "../util/money"\nrequire("json")\nrequire "x#{v}"\n'
    assert extract_imports("lib/shop/order.rb", src) == ["shop/cart", "./../util/money", "json"]
    files = {"lib/shop/order.rb", "lib/shop/cart.rb", "lib/util/money.rb", "vendor/json.txt", "other/cart.rb"}
    assert resolve_imports("lib/shop/order.rb", extract_imports("lib/shop/order.rb", src), files) == {
        "lib/shop/cart.rb", "lib/util/money.rb"}


def test_php_imports_extracted_and_resolved():
    src = b"<?php\nnamespace App\\Http;\nuse App\\Models\\{Order, Line as L};\nuse \\App\\Support\\Money, Psr\\Log;\n"
    specs = extract_imports("app/Http/Ctl.php", src)
    assert specs == ["App\\Models\\Order", "App\\Models\\Line", "App\\Support\\Money", "Psr\\Log"]
    files = {"app/Http/Ctl.php", "app/Models/Order.php", "app/Models/Line.php", "app/Support/Money.php",
             "app/Models/Other.php"}
    assert resolve_imports("app/Http/Ctl.php", specs, files) == {
        "app/Models/Order.php", "app/Models/Line.php", "app/Support/Money.php"}
