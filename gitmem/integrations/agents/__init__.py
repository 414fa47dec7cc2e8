"""Agent hooks: one agent-neutral core, one small adapter per coding agent.

Modules:

* ``events``: the normalised events (session start with its source, prompt, before a file
  is read or written, before a shell command, after a tool, after a tool failure, stop,
  session end, before and after compaction), the same fields whatever the agent;
* ``core``: what gitmem does for each event, once (``core.handle``), and the never-fail
  wrapper of an entry point (``core.run``);
* ``capture``: what is kept of an event in the session's spool (bounded, redacted, private
  files left out);
* ``session_start``: the session's opening context (imports the library; the one slow path);
* ``claude`` + ``claude_install``: the Claude Code adapter and its installer.
* ``codex`` + ``codex_install``: the Codex CLI adapter and its installer.
* ``gemini`` + ``gemini_install``: the Gemini CLI adapter and its installer.
* ``shell_reads``: which files a shell command line reads (Codex's ``Bash``, Gemini's
  ``run_shell_command``, Copilot's ``bash``); what a command runs or targets is ``gitmem.shellwords``.
* ``failures``: the salient terms of a failed tool call (exception names, test ids, error codes,
  traceback frames), for the after-failure hook.
* ``copilot`` + ``copilot_install``: the GitHub Copilot CLI adapter and its installer.
* ``cursor`` + ``cursor_install``: the Cursor adapter and its installer.
* ``opencode`` + ``opencode_install``: the OpenCode adapter and its installer, which writes gitmem's
  OpenCode plugin (``gitmem/resources/opencode-plugin.js``: OpenCode has no command hooks; the plugin
  spawns ``gitmem-opencode-hook`` from its JavaScript hooks).
* ``installing``: what every installer shares (``InstallResult``, ``SettingsError``, JSON settings files,
  the handler shim, the Claude-style hooks layout, ``mcpServers``, detection);
* ``installers``: the registry (agent name → installer module) and the protocol every installer follows,
  from which the CLI builds ``gitmem install [AGENT]`` / ``gitmem uninstall [AGENT]``.
* ``vscode``: VS Code's agent-mode input, which reaches ``claude``'s and ``copilot``'s entry points
  (VS Code runs both agents' hook files); no installer: ``gitmem install claude``.
* ``patches``: the ``apply_patch`` patch format and its events (Codex, OpenCode, VS Code).
* ``reconcile``: the session's spool against the agent's own transcript (in the consolidation), with one
  reader per transcript format: ``claude_transcript``, ``codex_transcript``, ``gemini_transcript``,
  ``copilot_transcript``.

Adding an agent (the contract): an adapter is one module ``<agent>.py`` that

1. maps its agent's hook input to an ``events`` object (``to_event(raw) -> Event | None``, or a
   list when one tool call stands for several files, e.g. a patch: ``core.run`` handles each):
   its event names, its field names, its tool names to a ``BeforeFile.kind`` /
   ``AfterTool.kind``, the part of a tool's response worth keeping (``AfterTool.response``),
   which input keys hold paths; None for what gitmem does not handle;
2. maps the core's answer (text to inject, or None) to what its agent reads: where injected
   context goes, the agent's size cap, which events must print nothing, the exit code;
3. has an entry point that reads stdin and calls ``core.run(read, write)`` (always exit 0);
4. installs and uninstalls itself (``<agent>_install.py``: its settings files, idempotent,
   never dropping the user's own entries; ``installers.Installer``: ``NAME``, ``USER_SCOPE``,
   ``install``, ``uninstall``, ``status``, ``marks``, ``detect``), built on ``installing`` and wired into
   ``gitmem install <agent>`` by one line in ``installers.AGENTS``;
5. if the agent keeps a transcript, passes its path (``Event.transcript``) on its Stop and SessionEnd
   events, and has a reader ``<agent>_transcript.py`` (``events``: the transcript's tool calls as the
   adapter's own ``AfterTool`` events, built from the hook input the agent would have sent, and the final
   message; ``folders``: where the agent keeps transcripts, the only place one is read), registered in
   ``reconcile.READERS``.

An adapter holds no behaviour of its own: no rendering, ranking, capture, config reading,
logging, spawning or session state (all in ``core``, ``capture``, ``rank.render``,
``config``, ``infra``, ``layout``). Like the core, it imports only the standard library and
gitmem's stdlib-only modules (tests/test_hot_path.py checks every per-tool-call event).

This file imports nothing.
"""
