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
    /// What the row claims the hook answers.
    expect: Expect,
}

/// A row's claim: the hook's answer, and for a checkpoint, which VMs' VPGs must finish it
/// inside the budget for the claim to hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// No decision and no context.
    Nothing,
    /// No decision, with the checkpoints of these VMs as context.
    Confirmed(&'static [&'static str]),
    /// A deny because the insert task on these VMs' VPGs ends in failure.
    TaskFails(&'static [&'static str]),
    Deny,
    Ask,
    Block,
}

impl Expect {
    /// How the demo labels the answer this row claims.
    fn label(self) -> &'static str {
        match self {
            Expect::Nothing => NOTHING,
            Expect::Confirmed(_) => CONTEXT,
            Expect::TaskFails(_) | Expect::Deny => "DENY",
            Expect::Ask => "ASK",
            Expect::Block => BLOCKED,
        }
    }

    /// Sim seconds the slowest VPG of the row's VMs needs to give the claimed answer: its
    /// insert task, and for a confirmation the listing of its tag too.
    fn sim_secs(self, scenario: &Scenario) -> f64 {
        let (vms, listing) = match self {
            Expect::Confirmed(vms) => (vms, true),
            Expect::TaskFails(vms) => (vms, false),
            _ => return 0.0,
        };
        scenario
            .vpgs
            .iter()
            .filter(|vpg| {
                vpg.vms
                    .iter()
                    .any(|&i| vms.contains(&scenario.vms[i].name.as_str()))
            })
            .map(|vpg| vpg.timing.task + if listing { vpg.timing.tag_latency } else { 0.0 })
            .fold(0.0, f64::max)
    }
}

const NOTHING: &str = "no decision: the host's own rules apply";
const CONTEXT: &str = "no decision + context for the model";
const BLOCKED: &str = "exit 2 (blocked)";

/// The budget of the short-budget rows: they show a deny for a spent budget at any scale.
const SHORT_BUDGET_SECS: f64 = 2.0;
/// The least budget of the normal config, in real seconds.
const LEAST_BUDGET_SECS: f64 = 20.0;
/// Room for what is not the VPG's cadence: starting the hook, logging in, the guard's polls.
const BUDGET_SLACK_SECS: f64 = 10.0;

/// The normal config's budget in real seconds at `time_scale`: twice what the slowest row
/// (or the story) needs in simulated time, plus slack, so that every row shows what it claims
/// at any scale (at scale 1 an Azure VPG lists its tag after about 34 real seconds).
fn normal_budget(scenario: &Scenario, rows: &[Row], time_scale: f64) -> anyhow::Result<f64> {
    let needed = rows
        .iter()
        .filter(|row| matches!(row.config, Variant::Normal))
        .map(|row| row.expect)
        .chain([Expect::Confirmed(&[STORY_VM])])
        .map(|expect| expect.sim_secs(scenario))
        .fold(0.0, f64::max);
    let budget = (2.0 * needed / time_scale + BUDGET_SLACK_SECS)
        .max(LEAST_BUDGET_SECS)
        .ceil();
    if budget > crate::config::MAX_BUDGET_SECS {
        bail!(
            "--time-scale {time_scale} is too slow for the demo: its rows would need a {budget} s budget, more than the {} s a hook may have; use 1 or more",
            crate::config::MAX_BUDGET_SECS
        );
    }
    Ok(budget)
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
    // The hook stamps its tags with the real clock: the simulator reports real time too, so
    // that a tag and the checkpoint Zerto lists for it agree while the cadences run faster.
    options.wall_clock = true;
    let rows = rows();
    let budget = normal_budget(&options.scenario, &rows, args.time_scale)?;
    let sim = Sim::start(options).context("cannot start the simulator")?;
    let demo = Demo::new(&sim, dir.path(), budget)?;
    say(format!(
        "rewind demo: a simulated ZVM at {} (time x{}), the lab scenario, the real hook binary.\n",
        sim.url(),
        args.time_scale
    ));

    say("== The decision table: one tool call per row ==\n");
    let mut missed = Vec::new();
    for (n, row) in rows.iter().enumerate() {
        if !demo.row(n + 1, row)? {
            missed.push(n + 1);
        }
    }
    if !demo.row_raw(
        rows.len() + 1,
        "stdin that is not JSON (the host sent garbage)",
        b"{\"tool_name\": \"mcp__ssh__exec\", \"tool_input\": {",
    )? {
        missed.push(rows.len() + 1);
    }

    say("== The story: a guarded change, a broken file, the file back ==\n");
    demo.story()?;
    say("\n== The whole VM: a preview in a failover test, then the VM back ==\n");
    demo.whole_vm()?;
    if !missed.is_empty() {
        bail!(
            "row(s) {} did not show what they claim (a busy machine, or a budget too short for --time-scale {})",
            missed
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            args.time_scale
        );
    }
    Ok(())
}

struct Demo<'a> {
    sim: &'a Sim,
    dir: PathBuf,
    binary: PathBuf,
}

impl<'a> Demo<'a> {
    fn new(sim: &'a Sim, dir: &Path, budget: f64) -> anyhow::Result<Self> {
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
        demo.write_config("config.toml", &sim.url(), true, budget)?;
        demo.write_config(
            "config-short-budget.toml",
            &sim.url(),
            true,
            SHORT_BUDGET_SECS,
        )?;
        demo.write_config("config-down.toml", &closed, true, budget)?;
        demo.write_config("config-no-ca.toml", &sim.url(), false, budget)?;
        Ok(demo)
    }

    fn write_config(&self, name: &str, url: &str, ca: bool, budget: f64) -> anyhow::Result<()> {
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

    /// Runs one row; whether it showed what it claims.
    fn row(&self, n: usize, row: &Row) -> anyhow::Result<bool> {
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
        Ok(result? == row.expect.label())
    }

    fn row_raw(&self, n: usize, title: &str, stdin: &[u8]) -> anyhow::Result<bool> {
        let label = self.hook(n, title, "(garbage)", Variant::Normal, stdin)?;
        Ok(label == Expect::Block.label())
    }

    /// Runs `rewind hook` on one call, prints the decision readably and returns its label.
    fn hook(
        &self,
        n: usize,
        title: &str,
        tool: &str,
        config: Variant,
        stdin: &[u8],
    ) -> anyhow::Result<String> {
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
                String::from(BLOCKED),
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
                "none" if text.is_empty() => String::from(NOTHING),
                "none" => String::from(CONTEXT),
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
        Ok(label)
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
        let label = self.hook(
            1,
            "the agent asks to edit the file over ssh",
            "mcp__ssh__exec",
            Variant::Normal,
            call.to_string().as_bytes(),
        )?;
        if label != CONTEXT {
            bail!("the guarded change got no confirmed checkpoint ({label})");
        }

        let broken =
            String::from_utf8_lossy(&before).replace("mode = safe", "mode = f@st\u{0}garbage");
        self.sim
            .write_guest_file(STORY_VM, STORY_PATH, broken.as_bytes())?;
        // The same change, seen whole: the VM's content marker moves on.
        self.sim
            .change_vm(STORY_VM)
            .context("the lab scenario has no jp-ubuntu")?;
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

impl Demo<'_> {
    /// The story's change undone for the whole VM: `restore-vm --preview` brings the VM up
    /// from the checkpoint in a failover test and touches nothing, then `restore-vm --yes`
    /// restores, verifies and commits; the VM's content marker is back where it was before
    /// the change.
    fn whole_vm(&self) -> anyhow::Result<()> {
        let marker = |when: &str| -> anyhow::Result<u64> {
            let marker = self
                .sim
                .vm_marker(STORY_VM)
                .context("the lab scenario has no jp-ubuntu")?;
            say(format!("{STORY_VM}'s content marker {when}: {marker}"));
            Ok(marker)
        };
        let changed = marker("after the agent's change")?;
        for (args, what) in [
            (&["--preview", "--yes"][..], "preview"),
            (&["--yes"][..], "restore"),
        ] {
            say(format!(
                "\n$ rewind restore-vm {STORY_VM} --change {STORY_CHANGE} {}",
                args.join(" ")
            ));
            let status = self
                .command(Variant::Normal)
                .args(["restore-vm", STORY_VM, "--change", STORY_CHANGE])
                .args(args)
                .stdin(Stdio::null())
                .status()
                .with_context(|| format!("cannot run rewind restore-vm ({what})"))?;
            if !status.success() {
                bail!("rewind restore-vm ({what}) failed ({status})");
            }
            if what == "preview" && marker("after the preview")? != changed {
                bail!("the preview touched the VM");
            }
        }
        if marker("after the restore")? != 0 {
            bail!("the VM is not back at the point before the change");
        }
        say("the VM is back at the point the hook pinned before the change.");
        Ok(())
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "the decision table as data, one row per case"
)]
fn rows() -> Vec<Row> {
    let exec = |host: &str| json!({"host": host, "command": "sudo systemctl restart app"});
    let row = |title, tool, input, config, fault, expect| Row {
        title,
        tool,
        input,
        config,
        fault,
        expect,
    };
    vec![
        row(
            "a local tool: touches only this machine",
            "Edit",
            json!({"file_path": "/tmp/notes.md"}),
            Variant::Normal,
            None,
            Expect::Nothing,
        ),
        row(
            "a read-only tool",
            "mcp__ssh__read_file",
            json!({"host": "jp-ubuntu", "path": "/etc/app.conf"}),
            Variant::Normal,
            None,
            Expect::Nothing,
        ),
        row(
            "mutating, one vSphere VPG: checkpoint confirmed",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::Normal,
            None,
            Expect::Confirmed(&["jp-ubuntu"]),
        ),
        row(
            "mutating, a VM in two VPGs (vSphere + Azure): both confirmed",
            "mcp__ssh__exec",
            exec("root@db01"),
            Variant::Normal,
            None,
            Expect::Confirmed(&["db01"]),
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
            Expect::TaskFails(&["win2019-1"]),
        ),
        row(
            "mutating, the tag is never listed (2 s budget)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::ShortBudget,
            Some(Fault::TagNeverListed {
                vpg: String::from("jp-ubuntu-vpg"),
            }),
            Expect::Deny,
        ),
        row(
            "mutating, a VM Zerto does not know",
            "mcp__ssh__exec",
            exec("mail01.corp.example"),
            Variant::Normal,
            None,
            Expect::Ask,
        ),
        row(
            "mutating, a name two VMs share",
            "mcp__ssh__exec",
            exec("web"),
            Variant::Normal,
            None,
            Expect::Ask,
        ),
        row(
            "mutating, an Ansible limit naming two VMs: every VPG of both confirmed",
            "mcp__ansible__run_playbook",
            json!({"playbook": "patch.yml", "limit": "jp-ubuntu:db01"}),
            Variant::Normal,
            None,
            Expect::Confirmed(&["jp-ubuntu", "db01"]),
        ),
        row(
            "mutating, a host pattern only an inventory can expand",
            "mcp__ansible__run_playbook",
            json!({"playbook": "patch.yml", "limit": "jp-ubuntu:!db01"}),
            Variant::Normal,
            None,
            Expect::Ask,
        ),
        row(
            "mutating, no VM in the arguments",
            "mcp__ssh__exec",
            json!({"command": "reboot"}),
            Variant::Normal,
            None,
            Expect::Ask,
        ),
        row(
            "a tool in no catalog",
            "mcp__vmware__power_off",
            json!({"vm": "jp-ubuntu"}),
            Variant::Normal,
            None,
            Expect::Ask,
        ),
        row(
            "the ZVM is down",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::Down,
            None,
            Expect::Deny,
        ),
        row(
            "the ZVM's certificate is not trusted (no ca_cert)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::NoCa,
            None,
            Expect::Deny,
        ),
        row(
            "the ZVM hangs (2 s budget)",
            "mcp__ssh__exec",
            exec("jp-ubuntu"),
            Variant::ShortBudget,
            Some(Fault::Hang {
                route: String::from("*"),
            }),
            Expect::Deny,
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
    use super::*;

    /// At every scale, each row that claims a confirmed checkpoint (or a failed task) gets a
    /// budget twice what its slowest VPG needs: at scale 1 the Azure VPG of db01 lists its
    /// tag after about 34 real seconds, which a fixed 20 s budget turned into a deny.
    #[test]
    fn the_budget_follows_the_time_scale_so_every_row_shows_its_claim() {
        let scenario = Scenario::lab();
        let rows = rows();
        let azure = scenario
            .vpgs
            .iter()
            .find(|vpg| vpg.name == "db01-azure")
            .expect("the lab has db01's Azure VPG");
        assert!(azure.timing.tag_latency >= 30.0, "{:?}", azure.timing);
        for scale in [1.0, 2.5, 20.0, 100.0, 1000.0] {
            let budget = normal_budget(&scenario, &rows, scale).expect("a budget");
            assert!((LEAST_BUDGET_SECS..=crate::config::MAX_BUDGET_SECS).contains(&budget));
            for row in &rows {
                let real = row.expect.sim_secs(&scenario) / scale;
                match row.config {
                    Variant::Normal | Variant::Down | Variant::NoCa => assert!(
                        2.0 * real <= budget,
                        "{}: needs {real} s at x{scale}, budget {budget} s",
                        row.title
                    ),
                    // These claim a deny because the budget runs out: they need none.
                    Variant::ShortBudget => assert_eq!(row.expect, Expect::Deny, "{}", row.title),
                }
            }
        }
        let both = rows
            .iter()
            .find(|row| row.title.contains("both confirmed"))
            .expect("the two-VPG row");
        assert!(both.expect.sim_secs(&scenario) >= azure.timing.tag_latency + azure.timing.task);
        assert!(normal_budget(&scenario, &rows, 1.0).expect("x1") >= 2.0 * 37.0);
        let too_slow = normal_budget(&scenario, &rows, 0.001).expect_err("too slow");
        assert!(
            too_slow.to_string().contains("--time-scale 0.001"),
            "{too_slow}"
        );
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("averylongword x", 4), ["averylongword", "x"]);
    }
}
