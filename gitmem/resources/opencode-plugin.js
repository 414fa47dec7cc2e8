// gitmem-opencode-hook: gitmem's OpenCode plugin. Written by `gitmem install opencode`, removed whole by
// `gitmem uninstall opencode`: edit nothing here (an install rewrites it).
//
// It gives OpenCode's model gitmem's memories (session start: in the system prompt; a prompt: next to the
// user's message; a file read or edited: after that tool's output) and feeds gitmem's capture (each tool
// call, the end of each turn). Each hook spawns `gitmem-opencode-hook EVENT` with one JSON object on stdin
// and reads {"context": text} from its stdout (gitmem/integrations/agents/opencode.py). A hook never throws
// and gives up after its time limit: a missing or failing gitmem never breaks OpenCode. When gitmem is missing
// or does not start and the repository has memories, the session start gets a one-line notice instead.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

// Filled in by the installer: the hook script of a --user install ("" for a project's: no machine path), the
// hook command, the time limit of each event (ms), the tools whose call may get context, the notice, where the
// clone's bin-dir file is (in git's common dir) and the team memories (in the work tree).
const CONFIG = __GITMEM_CONFIG__;

function git(directory, args) {
  return execFileSync("git", args, { cwd: directory, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"],
                                     timeout: 5000 }).trim();
}

// The hook script on this machine: a --user install's, else the one in the folder the clone's bin-dir file
// names (written by `gitmem install` on each machine), else the command on PATH.
function locate(directory) {
  if (CONFIG.script && existsSync(CONFIG.script)) return CONFIG.script;
  try {
    let common = git(directory, ["rev-parse", "--git-common-dir"]);
    if (!isAbsolute(common)) common = join(directory, common);
    const bin = readFileSync(join(common, CONFIG.pointer), "utf8").split("\n")[0];
    const script = join(bin, CONFIG.command);
    if (bin && existsSync(script)) return script;
  } catch {}
  return CONFIG.command;
}

// Whether the repository holding `directory` has memory files (then a missing gitmem is worth a notice).
function hasMemories(directory) {
  try {
    const top = git(directory, ["rev-parse", "--show-toplevel"]);
    return readdirSync(join(top, CONFIG.memories)).some((f) => f.endsWith(".md"));
  } catch {
    return false;
  }
}

// The hook's context text; null when it could not start or failed (gitmem's hooks always exit 0).
function run(cmd, event, payload) {
  return new Promise((resolve) => {
    let done = false;
    let out = "";
    let child;
    const finish = (text) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(() => {
      // the hook's whole process group (a shell's children too), and its pipes, so nothing waits on them
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
      try { child.stdout.destroy(); child.stdin.destroy(); } catch {}
      finish("");
    }, CONFIG.timeouts[event] || 5000);
    try {
      child = spawn(cmd, [event], { stdio: ["pipe", "pipe", "ignore"], detached: true });
      child.on("error", () => finish(null));
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (d) => { out += d; });
      child.on("close", (code) => {
        if (code !== 0) return finish(null);
        try { finish(String(JSON.parse(out).context || "")); } catch { finish(""); }
      });
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(payload));
    } catch {
      finish("");
    }
  });
}

export const GitmemPlugin = async ({ directory }) => {
  let cmd = null;
  const call = async (event, input, output) => {
    try {
      cmd = cmd || locate(directory);
      const text = await run(cmd, event, { cwd: directory, input, output });
      if (text === null && event === "session.start" && hasMemories(directory)) return CONFIG.notice;
      return text || "";
    } catch {
      return "";
    }
  };
  const created = new Set(); // sessions created in this process (else resumed)
  const compacted = new Set(); // sessions compacted since their session start
  const starts = new Map(); // session → promise of its session-start text
  const before = new Map(); // tool call → promise of the context to append to its output

  const start = (sessionID) => {
    if (!starts.has(sessionID)) {
      const source = compacted.has(sessionID) ? "compact" : created.has(sessionID) ? "startup" : "resume";
      compacted.delete(sessionID);
      starts.set(sessionID, call("session.start", { sessionID, source }, {}));
    }
    return starts.get(sessionID);
  };

  return {
    event: async ({ event }) => {
      try {
        const sessionID = event.properties && (event.properties.sessionID || (event.properties.info || {}).id);
        if (!sessionID) return;
        if (event.type === "session.created") created.add(sessionID);
        else if (event.type === "session.compacted") {
          starts.delete(sessionID);
          compacted.add(sessionID);
        } else if (event.type === "session.idle") await call("session.idle", { sessionID }, {});
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        await start(input.sessionID);
        const parts = (output.parts || []).filter((p) => p && p.type === "text")
          .map((p) => ({ type: p.type, text: p.text, synthetic: p.synthetic, ignored: p.ignored }));
        const text = await call("chat.message", input, { parts });
        const last = output.parts[output.parts.length - 1];
        if (text && last && output.message) {
          // a part id sorts right after the last part's: OpenCode orders a message's parts by id
          output.parts.push({ id: last.id + "gitmem", sessionID: input.sessionID, messageID: output.message.id,
                              type: "text", text, synthetic: true });
        }
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (!input.sessionID) return;
        const text = await start(input.sessionID);
        if (text) output.system.push(text);
      } catch {}
    },
    "tool.execute.before": async (input, output) => {
      try {
        if (CONFIG.beforeTools.includes(input.tool)) {
          before.set(input.callID, await call("tool.execute.before", input, { args: output.args }));
        }
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        const text = before.get(input.callID) || "";
        before.delete(input.callID);
        const result = typeof output.output === "string" ? output.output : "";
        const meta = output.metadata || {};
        await call("tool.execute.after", input, { title: output.title, output: result.slice(0, CONFIG.maxOutput),
                                                  metadata: { exit: meta.exit } });
        if (text && typeof output.output === "string") output.output += "\n\n" + text;
      } catch {}
    },
    dispose: async () => {
      try {
        await Promise.all([...starts.keys()].map((sessionID) => call("session.end", { sessionID }, {})));
      } catch {}
    },
  };
};
