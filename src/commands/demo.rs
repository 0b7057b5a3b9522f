//! `rewind demo`: the whole story against an in-process simulator, with no configuration and
//! no network. Every decision comes from the real binary: `rewind hook` and `rewind recover`
//! run as processes, exactly as a host and an operator would run them.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::say;
use crate::cli::DemoArgs;
use crate::sim::{FailState, Fault, Scenario, Sim, SimOptions};

/// The file the simulated agent breaks and `recover` brings back.
const STORY_VM: &str = "jp-ubuntu";
const STORY_PATH: &str = "/etc/app.conf";
const STORY_CHANGE: &str = "toolu_demo_story";

/// One row of the decision table, as a tool call.
struct Row {
    title: &'static str,
    tool: &'static str,
    input: Value,
    /// Which config the hook reads: the normal one, or a variant.
    config: Variant,
    fault: Option<Fault>,
}

#[derive(Clone, Copy)]
enum Variant {
    Normal,
    ShortBudget,
    Down,
    NoCa,
}

/// Runs the demo.
pub fn demo(args: &DemoArgs) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new().prefix("rewind-demo-").tempdir()?;
    let mut options = SimOptions::new(Scenario::lab(), dir.path().join("sim"));
    options.time_scale = args.time_scale;
    let sim = Sim::start(options).context("cannot start the simulator")?;
    let demo = Demo::new(&sim, dir.path())?;
    say(format!(
        "rewind demo: a simulated ZVM at {} (time x{}), the lab scenario, the real hook binary.\n",
        sim.url(),
        args.time_scale
    ));

    say("== The decision table: one tool call per row ==\n");
    let rows = rows();
    for (n, row) in rows.iter().enumerate() {
        demo.row(n + 1, row)?;
    }
    demo.row_raw(
        rows.len() + 1,
        "stdin that is not JSON (the host sent garbage)",
        b"{\"tool_name\": \"mcp__ssh__exec\", \"tool_input\": {",
    )?;

    say("== The story: a guarded change, a broken file, the file back ==\n");
    demo.story()
}

struct Demo<'a> {
    sim: &'a Sim,
    dir: PathBuf,
    binary: PathBuf,
}

impl<'a> Demo<'a> {
    fn new(sim: &'a Sim, dir: &Path) -> anyhow::Result<Self> {
        let binary = std::env::current_exe().context("cannot tell where the rewind binary is")?;
        let demo = Demo {
            sim,
            dir: dir.to_path_buf(),
            binary,
        };
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            format!("https://127.0.0.1:{}", listener.local_addr()?.port())
        };
        demo.write_config("config.toml", &sim.url(), true, 20)?;
        demo.write_config("config-short-budget.toml", &sim.url(), true, 2)?;
        demo.write_config("config-down.toml", &closed, true, 20)?;
        demo.write_config("config-no-ca.toml", &sim.url(), false, 20)?;
        Ok(demo)
    }

    fn write_config(&self, name: &str, url: &str, ca: bool, budget: u32) -> anyhow::Result<()> {
        let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
        let text = format!(
            "{}\n[hook]\nbudget_secs = {budget}\naudit_log = {}\n",
            self.sim.zvm_config_for(url, ca),
            quote(&self.dir.join("state/audit.jsonl").display().to_string()),
        );
        std::fs::write(self.dir.join(name), text)?;
        Ok(())
    }

    /// The binary with the demo's config, password and private state directories.
    fn command(&self, config: Variant) -> Command {
        let name = match config {
            Variant::Normal => "config.toml",
            Variant::ShortBudget => "config-short-budget.toml",
            Variant::Down => "config-down.toml",
            Variant::NoCa => "config-no-ca.toml",
        };
        let mut cmd = Command::new(&self.binary);
        cmd.env("REWIND_CONFIG", self.dir.join(name))
            .env("REWIND_ZVM_PASSWORD", self.sim.password())
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .env("XDG_STATE_HOME", self.dir.join("state"));
        cmd
    }

    fn row(&self, n: usize, row: &Row) -> anyhow::Result<()> {
        let stdin = json!({
            "session_id": "d3m0d3m0-0000-4000-8000-000000000000",
            "hook_event_name": "PreToolUse",
            "tool_name": row.tool,
            "tool_input": &row.input,
            "tool_use_id": format!("toolu_demo_{n:02}"),
        });
        if let Some(fault) = &row.fault {
            self.sim.add_fault(fault.clone());
        }
        let result = self.hook(
            n,
            row.title,
            row.tool,
            row.config,
            stdin.to_string().as_bytes(),
        );
        self.sim.clear_faults();
        result
    }

    fn row_raw(&self, n: usize, title: &str, stdin: &[u8]) -> anyhow::Result<()> {
        self.hook(n, title, "(garbage)", Variant::Normal, stdin)
    }

    /// Runs `rewind hook` on one call and prints the decision readably.
    fn hook(
        &self,
        n: usize,
        title: &str,
        tool: &str,
        config: Variant,
        stdin: &[u8],
    ) -> anyhow::Result<()> {
        say(format!("{n:>2}. {title}\n    {tool}"));
        let started = Instant::now();
        let mut child = self
            .command(config)
            .args(["hook", "--host", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run rewind hook")?;
        child
            .stdin
            .take()
            .context("no stdin")?
            .write_all(stdin)
            .context("cannot write the tool call")?;
        let out = child.wait_with_output()?;
        let elapsed = started.elapsed();
        let code = out.status.code().unwrap_or(-1);
        let (label, text) = if code == 2 {
            (
                String::from("exit 2 (blocked)"),
                String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            )
        } else {
            let answer: Value = serde_json::from_slice(&out.stdout)
                .with_context(|| format!("rewind hook printed no JSON (exit {code})"))?;
            let specific = &answer["hookSpecificOutput"];
            let decision = specific["permissionDecision"].as_str().unwrap_or("none");
            let text = specific["permissionDecisionReason"]
                .as_str()
                .map(str::to_owned)
                .into_iter()
                .chain(specific["additionalContext"].as_str().map(str::to_owned))
                .collect::<Vec<_>>()
                .join("\n");
            let label = match decision {
                "none" if text.is_empty() => {
                    String::from("no decision: the host's own rules apply")
                }
                "none" => String::from("no decision + context for the model"),
                other => other.to_uppercase(),
            };
            (label, text)
        };
        say(format!("    → {label}   ({} ms)", elapsed.as_millis()));
        for line in text.lines() {
            for wrapped in wrap(line, 92) {
                say(format!("      {wrapped}"));
            }
        }
        say("");
        Ok(())
    }

    /// A guarded change, the agent breaking the file, and `recover` bringing it back.
    fn story(&self) -> anyhow::Result<()> {
        let before = self
            .sim
            .guest_file(STORY_VM, STORY_PATH)
            .context("the lab scenario has no /etc/app.conf on jp-ubuntu")?;
        say(format!(
            "{STORY_VM}:{STORY_PATH} now:  sha256 {}",
            sha(&before)
        ));
        say(format!("{}\n", indent(&String::from_utf8_lossy(&before))));

        let call = json!({
            "session_id": "d3m0d3m0-0000-4000-8000-000000000000",
            "hook_event_name": "PreToolUse",
            "tool_name": "mcp__ssh__exec",
            "tool_input": {"host": STORY_VM, "command": "sudo sed -i 's/mode = safe/mode = fast/' /etc/app.conf"},
            "tool_use_id": STORY_CHANGE,
        });
        self.hook(
            1,
            "the agent asks to edit the file over ssh",
            "mcp__ssh__exec",
            Variant::Normal,
            call.to_string().as_bytes(),
        )?;

        let broken =
            String::from_utf8_lossy(&before).replace("mode = safe", "mode = f@st\u{0}garbage");
        self.sim
            .write_guest_file(STORY_VM, STORY_PATH, broken.as_bytes())?;
        say(format!(
            "The agent's edit went wrong. {STORY_PATH} is now: sha256 {}",
            sha(broken.as_bytes())
        ));
        say(format!("{}\n", indent(&broken.replace('\u{0}', "\\0"))));

        let out_dir = self.dir.join("restored");
        say(format!(
            "$ rewind recover --vm {STORY_VM} --path {STORY_PATH} --change {STORY_CHANGE} --out {} --yes",
            out_dir.display()
        ));
        let status = self
            .command(Variant::Normal)
            .args([
                "recover",
                "--vm",
                STORY_VM,
                "--path",
                STORY_PATH,
                "--change",
                STORY_CHANGE,
                "--yes",
                "--out",
            ])
            .arg(&out_dir)
            .stdin(Stdio::null())
            .status()
            .context("cannot run rewind recover")?;
        if !status.success() {
            bail!("rewind recover failed ({status})");
        }
        let restored = std::fs::read(out_dir.join("app.conf")).context("recover wrote no file")?;
        say("");
        say(format!("before the change: sha256 {}", sha(&before)));
        say(format!("restored:          sha256 {}", sha(&restored)));
        if restored != before {
            bail!("the restored file differs from the file before the change");
        }
        say("byte-identical: the file is back as it was before the agent touched it.");
        let sessions = self.sim.flr_sessions();
        if !sessions.is_empty() {
            bail!(
                "{} File Level Restore session(s) left mounted",
                sessions.len()
            );
        }
        say("no File Level Restore session is left mounted.");
        Ok(())
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "the decision table as data, one row per case"
)]
fn rows() -> Vec<Row> {
    let exec = |host: &str| json!({"host": host, "command": "sudo systemctl restart app"});
    let row = |title, tool, input, config, fault| Row {
        title,
        tool,
        input,
        config,
        fault,
    };
    vec![
        row(
            "a local tool: touches only this machine",
            "Edit",
            json!({"file_path": "/tmp/notes.md"}),
            Variant::Normal,
            None,
        ),
        row(
            "a read-only tool",
            "mcp__ssh__read_file",
            json!({"host": "jp-ubuntu", "path": "/etc/app.conf"}),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, one vSphere VPG: checkpoint confirmed",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, a VM in two VPGs (vSphere + Azure): both confirmed",
            "mcp__ssh__exec",
            exec("root@db01"),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, Zerto's checkpoint task fails",
            "mcp__winrm__run_command",
            json!({"computer_name": "win2019-1", "command": "Restart-Service W3SVC"}),
            Variant::Normal,
            Some(Fault::InsertFails {
                vpg: String::from("win2019-aws"),
                state: FailState::Failed,
                reason: String::from("The VPG is not meeting its SLA"),
            }),
        ),
        row(
            "mutating, the tag is never listed (2 s budget)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::ShortBudget,
            Some(Fault::TagNeverListed {
                vpg: String::from("jp-ubuntu-vpg"),
            }),
        ),
        row(
            "mutating, a VM Zerto does not know",
            "mcp__ssh__exec",
            exec("mail01.corp.example"),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, a name two VMs share",
            "mcp__ssh__exec",
            exec("web"),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, an Ansible limit naming two VMs: every VPG of both confirmed",
            "mcp__ansible__run_playbook",
            json!({"playbook": "patch.yml", "limit": "jp-ubuntu:db01"}),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, a host pattern only an inventory can expand",
            "mcp__ansible__run_playbook",
            json!({"playbook": "patch.yml", "limit": "jp-ubuntu:!db01"}),
            Variant::Normal,
            None,
        ),
        row(
            "mutating, no VM in the arguments",
            "mcp__ssh__exec",
            json!({"command": "reboot"}),
            Variant::Normal,
            None,
        ),
        row(
            "a tool in no catalog",
            "mcp__vmware__power_off",
            json!({"vm": "jp-ubuntu"}),
            Variant::Normal,
            None,
        ),
        row(
            "the ZVM is down",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::Down,
            None,
        ),
        row(
            "the ZVM's certificate is not trusted (no ca_cert)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::NoCa,
            None,
        ),
        row(
            "the ZVM hangs (2 s budget)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::ShortBudget,
            Some(Fault::Hang {
                route: String::from("*"),
            }),
        ),
    ]
}

fn sha(bytes: &[u8]) -> String {
    crate::hex(&Sha256::digest(bytes))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Breaks a line at spaces so that no piece is longer than `width` (longer words stay whole).
fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    for word in line.split(' ') {
        let current = out.last_mut().expect("never empty");
        if !current.is_empty() && current.len() + 1 + word.len() > width {
            out.push(word.to_owned());
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("averylongword x", 4), ["averylongword", "x"]);
    }
}
