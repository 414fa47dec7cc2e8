#!/usr/bin/env bash
# The CI snippets of docs/ci/ (GitHub Actions, GitLab CI), run as CI runs them: their run:/script: commands (read
# with PyYAML) in a fresh venv, `pip install gitmem-cli` given this checkout's wheel, on a repository whose change
# leaves a memory stale (must fail, naming it) and one whose change does not (must pass). testing/ci_snippets.py.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" -m testing.ci_snippets "$@"
