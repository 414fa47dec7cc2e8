#!/usr/bin/env bash
# The wheel, installed as users install it, walked through the README's first commands (issue 23 item 1).
#
#   testing/wheel_smoke.sh [--cold] [--keep]
#
# Builds the sdist and, from it, the wheel (`uv build`: what a release uploads), installs the wheel with
# `uv tool install "gitmem-cli[all] @ file://…"` into a tool folder of its own, then, in a fresh git repository
# and with PATH holding only that tool's bin folder and the system's folders (no development venv), runs:
# `gitmem --version`, `init`, `remember --anchor FILE::FUNCTION`, a commit on a branch that changes the function
# (the post-commit hook, run by the installed tool, must say the memory may be stale), `stale --json`,
# `check` (must fail, naming it), `install claude` (the settings must hold no machine path), `doctor --json`
# (must say "uv tool" and "wheel"), and the committed SessionStart hook in a fresh clone where `gitmem init` never
# ran (must give the memory). Each step that fails prints one line, "wheel smoke: FAIL <step>: <why>", and exits 1.
#
# Nothing of the user's is touched: HOME, XDG_*, UV_TOOL_DIR, UV_TOOL_BIN_DIR are in a temporary folder
# (removed at the end unless --keep). uv's download cache is ${XDG_CACHE_HOME:-~/.cache}/gitmem-ci/uv (kept
# between runs, as CI keeps its caches); --cold uses an empty one in the temporary folder instead (the install
# time of a first install). Needs: uv and a Python >= 3.11 on PATH, git, and the package index (PyPI).
# Prints the install's time and size, and a last line "wheel smoke: ok …".
set -euo pipefail

cold=""
keep=""
for arg in "$@"; do
    case $arg in
        --cold) cold=1 ;;
        --keep) keep=1 ;;
        *) echo "usage: testing/wheel_smoke.sh [--cold] [--keep]" >&2; exit 2 ;;
    esac
done

fail() {
    echo "wheel smoke: FAIL $1: $2" >&2
    exit 1
}

src=$(cd "$(dirname "$0")/.." && pwd)
uv=$(command -v uv) || fail setup "uv is not on PATH (pip install uv: the test extra has it)"
ci_cache="${XDG_CACHE_HOME:-$HOME/.cache}/gitmem-ci/uv"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gitmem-wheel-smoke.XXXXXX")
repo=$tmp/repo
sys_path=/usr/local/bin:/usr/bin:/bin

stop_daemons() {
    for r in "$repo" "$tmp/clone"; do
        if [ -d "$r/.gitmem" ] && [ -x "${bin:-/nonexistent}/gitmem" ]; then
            (cd "$r" && PATH="$bin:$sys_path" HOME="$tmp/home" "$bin/gitmem" daemon stop >/dev/null 2>&1) || :
        fi
    done
}

cleanup() {
    # The warm processes the read commands started (one may still be starting): asked to stop by their root (never
    # --all: other sessions' are not ours), then waited for; what still runs from $tmp after 15 s is ended by pid.
    # Only processes whose command line names this run's own temporary folder are looked at.
    local pids="" i
    if command -v pgrep >/dev/null 2>&1; then
        for i in $(seq 30); do
            stop_daemons
            pids=$(pgrep -f -- "$tmp/" 2>/dev/null || :)
            [ -z "$pids" ] && break
            sleep 0.5
        done
    else  # no procps: give a warm process that was still starting the time to start, then stop it
        stop_daemons
        sleep 5
        stop_daemons
    fi
    # shellcheck disable=SC2086
    [ -z "${pids:-}" ] || kill $pids 2>/dev/null || :
    if [ -z "$keep" ]; then
        chmod -R u+w "$tmp" 2>/dev/null || :
        rm -rf "$tmp" 2>/dev/null || { sleep 1; rm -rf "$tmp"; }
    else
        echo "wheel smoke: kept $tmp" >&2
    fi
}
trap cleanup EXIT

# -- 1. build: the sdist, then the wheel from the sdist (so the sdist is proven complete) ------------------
echo "wheel smoke: building in $tmp/dist"
export UV_CACHE_DIR=$ci_cache
[ -n "$cold" ] && export UV_CACHE_DIR=$tmp/uv-cache
export UV_PYTHON_DOWNLOADS=never  # the system's Python, never one uv would download
"$uv" build --quiet --out-dir "$tmp/dist" "$src" >"$tmp/build.log" 2>&1 ||
    fail build "uv build failed: $(tail -n 1 "$tmp/build.log")"
wheels=("$tmp"/dist/gitmem_cli-*-py3-none-any.whl)
[ -f "${wheels[0]}" ] || fail build "no gitmem_cli-*-py3-none-any.whl in $tmp/dist: $(ls "$tmp/dist")"
wheel=${wheels[0]}
version=$(basename "$wheel" | cut -d- -f2)
echo "wheel smoke: built $(basename "$wheel")"

# -- 2. install it as users do, into a tool folder of its own ---------------------------------------------
export UV_TOOL_DIR=$tmp/tools UV_TOOL_BIN_DIR=$tmp/bin
bin=$UV_TOOL_BIN_DIR
start=$(date +%s.%N)
"$uv" tool install --quiet "gitmem-cli[all] @ file://$wheel" >"$tmp/install.log" 2>&1 ||
    fail install "uv tool install failed: $(grep -v '^ *$' "$tmp/install.log" | tail -n 1)"
end=$(date +%s.%N)
install_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
env_dir=$UV_TOOL_DIR/gitmem-cli
[ -d "$env_dir" ] || fail install "no tool environment at $env_dir"
size_mb=$(du -sm "$env_dir" | cut -f1)
echo "wheel smoke: installed in ${install_s} s ($([ -n "$cold" ] && echo cold || echo warm) uv cache), tool environment ${size_mb} MB"

# -- 3. from here on: the installed tool only ---------------------------------------------------------------
# PATH: the tool's bin folder and the system's folders (git, sh); no venv, no ~/.local/bin of the user's.
export PATH="$bin:$sys_path"
unset VIRTUAL_ENV PYTHONPATH PYTHONHOME GITMEM_PYTHON GITMEM_NO_DAEMON
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config XDG_CACHE_HOME=$tmp/home/.cache \
    XDG_DATA_HOME=$tmp/home/.local/share XDG_STATE_HOME=$tmp/home/.local/state XDG_RUNTIME_DIR=$tmp/run
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
export GIT_CONFIG_NOSYSTEM=1
git config --global user.name "Wheel Smoke"
git config --global user.email "smoke@example.com"
git config --global init.defaultBranch main

found=$(command -v gitmem) || fail path "gitmem is not on PATH after the install"
[ "$found" = "$bin/gitmem" ] || fail path "the gitmem on PATH is $found, not the tool's $bin/gitmem"
for script in gitmem-hook gitmem-codex-hook gitmem-gemini-hook gitmem-copilot-hook gitmem-cursor-hook \
    gitmem-opencode-hook; do
    [ -x "$bin/$script" ] || fail path "the tool did not install the $script command"
done

out=$(gitmem --version) || fail version "gitmem --version exited $?"
[ "$(printf '%s\n' "$out" | head -n 1)" = "gitmem-cli $version" ] ||
    fail version "first line is not 'gitmem-cli $version': $(printf '%s' "$out" | head -n 1)"
case $out in
    *"wheel from $wheel, in the uv tool environment $env_dir "*) ;;
    *) fail version "it does not say it is the wheel in the uv tool environment $env_dir: $out" ;;
esac
echo "wheel smoke: $out" | head -n 2

mkdir -p "$repo"
cd "$repo"
git init -q
printf 'def total(items):\n    return sum(items)\n' >app.py
git add app.py
git commit -qm "first"
gitmem init >"$tmp/init.log" 2>&1 || fail init "gitmem init exited $?: $(tail -n 1 "$tmp/init.log")"
hook=$(git rev-parse --git-path hooks)/post-commit
grep -q "^INSTALL_PYTHON=.*$UV_TOOL_DIR/" "$hook" ||
    fail init "the post-commit hook does not run the tool's Python: $(grep '^INSTALL_PYTHON=' "$hook")"

mem=$(gitmem remember "total() must skip None items" --anchor app.py::total --json) ||
    fail remember "gitmem remember exited $?"
id=$(printf '%s' "$mem" | "$env_dir/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["id"])') ||
    fail remember "no id in its --json output"
git add .gitmem
git commit -qm "remember total" 2>"$tmp/commit1.err"

# A change on a branch, as in a pull request: the post-commit hook (the installed tool) re-checks the memory.
git switch -qc change
printf 'def total(items):\n    return sum(i for i in items if i is not None)\n' >app.py
git commit -qam "total skips None" 2>"$tmp/commit2.err" || fail commit "git commit exited $?"
grep -q "1 memory may be stale" "$tmp/commit2.err" ||
    fail commit "the post-commit hook did not say the memory may be stale: $(tr '\n' ' ' <"$tmp/commit2.err")"
grep -q " post-commit ok .* gitmem $version " "$(git rev-parse --git-common-dir)/gitmem/logs/hooks.log" ||
    fail commit "no 'post-commit ok … gitmem $version' line in the hooks log"

stale=$(gitmem stale --json) || fail stale "gitmem stale --json exited $?"
printf '%s' "$stale" | "$env_dir/bin/python" -c '
import json, sys
rows = {r["id"]: r for r in json.load(sys.stdin)}
sys.exit(0 if rows.get(sys.argv[1], {}).get("status") == "stale" else 1)' "$id" ||
    fail stale "memory $id is not stale in gitmem stale --json: $stale"

set +e
checked=$(gitmem check 2>&1)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail check "gitmem check exited $rc, not 1: $checked"
case $checked in
    *"stale: $id "*) ;;
    *) fail check "gitmem check does not name $id as stale: $checked" ;;
esac

gitmem install claude >"$tmp/install-claude.log" 2>&1 ||
    fail install-claude "gitmem install claude exited $?: $(tail -n 1 "$tmp/install-claude.log")"
[ -f .claude/settings.json ] || fail install-claude "no .claude/settings.json written"
for f in .claude/settings.json .mcp.json; do
    [ -f "$f" ] || continue
    ! grep -q -e "$tmp" -e "$UV_TOOL_DIR" -e "$bin" "$f" ||
        fail install-claude "$f names a path of this machine: $(grep -o -e "$tmp[^\" ]*" "$f" | head -n 1)"
done
# The one machine path is the clone's own, uncommitted pointer to the tool environment's scripts (stable across
# `uv tool upgrade`), by design: each teammate's `gitmem install` writes their own.
[ "$(cat "$(git rev-parse --git-common-dir)/gitmem/bin-dir")" = "$env_dir/bin" ] ||
    fail install-claude "the clone's bin-dir file does not name $env_dir/bin"

doc=$(gitmem doctor --json 2>/dev/null) || :
printf '%s' "$doc" | "$env_dir/bin/python" -c '
import json, sys
i = json.load(sys.stdin)["install"]
sys.exit(0 if (i["mode"], i["environment"], i["version"]) == ("wheel", "uv tool", sys.argv[1]) else 1)' "$version" ||
    fail doctor "gitmem doctor --json does not report the wheel in a uv tool environment: $doc"

# A teammate's fresh clone: the committed settings, no `gitmem init` here, no bin-dir file: the SessionStart
# hook finds gitmem-hook on PATH and gives the memory.
git add -A
git commit -qm "gitmem for Claude Code" 2>/dev/null
git clone -q "$repo" "$tmp/clone"
cd "$tmp/clone"
git switch -q change
[ ! -e "$(git rev-parse --git-common-dir)/gitmem" ] || fail clone "the fresh clone already has gitmem state"
command=$("$env_dir/bin/python" -c '
import json
print(json.load(open(".claude/settings.json"))["hooks"]["SessionStart"][0]["hooks"][0]["command"])')
given=$(printf '{"session_id": "smoke", "hook_event_name": "SessionStart", "source": "startup", "cwd": "%s"}' \
    "$PWD" | sh -c "$command") || fail clone "the SessionStart hook command exited $?"
case $given in
    *"$id"*"total() must skip None items"*) ;;
    *) fail clone "the SessionStart hook in a fresh clone did not give memory $id: $given" ;;
esac

echo "wheel smoke: ok gitmem-cli $version from $(basename "$wheel"): install ${install_s} s, ${size_mb} MB"
