"""The [org] and [personal] settings (issue 21): the project's config.toml and the user's, merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import config
from gitmem.config import DEFAULT_CONFIG, KNOWN_KEYS, load, load_user, scopes, unknown_items
from gitmem.errors import ConfigError
from gitmem.org.settings import DEFAULT_REGION, of_config, org_settings


def test_every_section_of_the_default_config_is_known() -> None:
    """A section gitmem documents must not be reported as a newer gitmem's (the [relevance] floors were, once)."""
    assert set(KNOWN_KEYS) >= {"relevance", "org", "personal"}
    assert unknown_items({"relevance": {"min_bm25": 5.0}, "org": {"uri": "s3://b/p", "repos": {"a": "../a"}},
                          "personal": {"enabled": False}}) == []
    assert "# [org]" in DEFAULT_CONFIG


def test_the_default_config_points_at_docs_that_document_every_org_and_personal_key() -> None:
    """``gitmem init``'s comments name a page that exists and no internal issue number; that page has every key of
    [org] and [personal], their defaults, and which of the two config files wins."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    assert "docs/configuration.md" in DEFAULT_CONFIG.splitlines()[0] and (docs / "configuration.md").is_file()
    assert 'README.md "Configuration"' not in DEFAULT_CONFIG and "issue" not in DEFAULT_CONFIG.lower()
    page = (docs / "configuration.md").read_text()
    org = page[page.index("### `[org]`"):page.index("### `[personal]`")]
    personal = page[page.index("### `[personal]`"):page.index("<!-- end of the generated part -->")]
    for key in KNOWN_KEYS["org"] - {"repos"}:
        assert f"`org.{key}`" in org, key
    assert "`[org.repos]` `NAME`" in org
    for key in KNOWN_KEYS["personal"]:
        assert f"`personal.{key}`" in personal, key
    for default in ("| `300` |", "| `200` |", "| `false` |", "`us-east-1`"):
        assert default in org
    assert "| `true` |" in personal and "| `300` |" in personal and "| `200` |" in personal
    assert "~/.config/gitmem/config.toml" in page and "**project's**" in page and "**yours** wins" in page


def test_project_org_wins_user_personal_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    user_file = tmp_path / "xdg" / "gitmem" / "config.toml"
    user_file.parent.mkdir(parents=True)
    user_file.write_text('[org]\nuri = "s3://mine/x"\ninject = true\n[org.repos]\nledger = "/src/ledger"\n'
                         'tools = "/src/tools"\n[personal]\nprompt_budget = 50\n[context]\nbudget = 9\n')
    project = tmp_path / "config.toml"
    project.write_text('[org]\nuri = "s3://team/org"\n[org.repos]\nledger = "../ledger"\n'
                       '[personal]\nenabled = false\nprompt_budget = 999\n')
    warnings: list[str] = []
    user = load_user(warnings)
    assert "[context]" in warnings[0] and "context" not in user
    org, personal = of_config(load(project, "config.toml"), user)
    assert org.uri == "s3://team/org" and org.inject is True and org.region == DEFAULT_REGION
    assert org.repos == {"ledger": "../ledger", "tools": "/src/tools"}
    assert personal.enabled is False and personal.prompt_budget == 50


def test_bad_values_are_refused_by_load_and_ignored_by_the_hooks(tmp_path: Path) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text('[org]\ninject = "yes"\n')
    with pytest.raises(ConfigError, match="org.inject"):
        load(bad, "config.toml")
    bad.write_text('[org.repos]\n"../evil" = "x"\n')
    assert org_settings(scopes({"org": {"repos": {"../evil": "x", "ok": "../ok"}}}, {})).repos == {"ok": "../ok"}
    assert org_settings(scopes({"org": {"session_budget": -3, "region": 7}}, {}), env={"AWS_REGION": "eu-1"}) \
        .session_budget == 300
    assert org_settings({"org": {}}, env={"AWS_REGION": "eu-1"}).region == "eu-1"
    for wrong in ("5", 0, -1, 7.5, True):  # seconds in (0, 7]: the session start's own limit is 8 s
        bad.write_text(f"[org]\nsession_timeout = {wrong!r}\n".replace("'", '"').replace("True", "true"))
        with pytest.raises(ConfigError, match="org.session_timeout"):
            load(bad, "config.toml")
        assert org_settings({"org": {"session_timeout": wrong}}).session_timeout == 5.0
    assert org_settings({"org": {"session_timeout": 2}}).session_timeout == 2.0
    assert not org_settings({}).configured


def test_user_config_dir_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem import layout

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv(layout.PERSONAL_DIR_ENV, raising=False)
    assert layout.personal_dir() == tmp_path / "gitmem" / "personal"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    assert layout.user_config_dir() == Path.home() / ".config" / "gitmem"
    monkeypatch.setenv(layout.PERSONAL_DIR_ENV, str(tmp_path / "p"))
    assert layout.personal_dir() == tmp_path / "p"
    assert config.USER_SECTIONS == ("org", "personal")
