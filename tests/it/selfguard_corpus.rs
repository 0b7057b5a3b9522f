//! The self-guard against its corpus, `tests/corpus/selfguard.toml`: at least a hundred ways
//! an agent could switch off or get around rewind's own safety net (the misses issue 34
//! listed, and variants through wrappers, variables, nesting, interpreters, archives, git,
//! PowerShell and other hosts' files), each fed to the real `rewind hook` of a managed
//! install on a configured machine (the protected-VM net written by `rewind vms`), and the
//! read-only and unrelated calls beside them. Targets: every payload meets the self-guard,
//! no near miss gets any decision.

use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use crate::support::{Run, TestEnv, hook_input, run};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    #[serde(default = "bash")]
    tool: String,
    #[serde(default)]
    cwd: Option<String>,
    expect: Expect,
    source: String,
    why: String,
}

fn bash() -> String {
    String::from("Bash")
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "kebab-case")]
enum Expect {
    Ask,
    None,
}

/// How the self-guard's answers begin and end, whatever the host: rewind asks a person
/// before any call that could switch off its own net.
const SELF_GUARD: &str = "could switch off or get around its own safety net";

/// The hook as the host runs it: a managed entry (`--config <pinned> hook --host … --managed`)
/// where this runs as root, which a managed install needs, else the user's entry. rewind's
/// state and cache in their default places under the home directory.
fn hook(env: &TestEnv, host: &str, managed: Option<&Path>, stdin: &[u8]) -> Run {
    let pinned = managed.map(|p| p.display().to_string());
    let mut args: Vec<&str> = Vec::new();
    if let Some(pinned) = &pinned {
        args.extend(["--config", pinned.as_str()]);
    }
    args.extend(["hook", "--host", host]);
    if managed.is_some() {
        args.push("--managed");
    }
    let mut cmd = env.command(&args);
    cmd.env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CACHE_HOME");
    if managed.is_some() {
        cmd.env("REWIND_CONFIG", env.path("elsewhere.toml"));
    }
    run(cmd, stdin)
}

/// The call as its host sends it, running in `cwd`.
fn payload(case: &Case, command: &str, cwd: &str) -> (&'static str, Vec<u8>) {
    match case.tool.as_str() {
        "write_stdin" => (
            "codex",
            json!({"session_id": "s", "turn_id": "t", "transcript_path": "/t", "cwd": cwd,
                "hook_event_name": "PreToolUse", "model": "m", "permission_mode": "default",
                "tool_name": "write_stdin", "tool_input": {"session_id": 3, "chars": command},
                "tool_use_id": "c1"})
            .to_string()
            .into_bytes(),
        ),
        "write_bash" => (
            "copilot",
            json!({"timestamp": 1, "cwd": cwd, "toolName": "write_bash",
                "toolArgs": json!({"shellId": "1", "input": command}).to_string()})
            .to_string()
            .into_bytes(),
        ),
        tool => {
            let mut call: serde_json::Value = serde_json::from_slice(&hook_input(
                tool,
                &json!({"command": command}),
                "toolu_01SELFGUARD",
            ))
            .expect("json");
            call["cwd"] = json!(cwd);
            ("claude-code", serde_json::to_vec(&call).expect("json"))
        }
    }
}

/// Whether the managed layer can be set up here: it must be root's.
fn as_root() -> bool {
    rewind::lockfile::is_root()
}

#[test]
fn no_way_to_switch_off_the_net_passes_and_no_near_miss_asks() {
    let path = format!("{}/tests/corpus/selfguard.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let corpus: Corpus = toml::from_str(&text).expect("corpus parses");
    let payloads = corpus
        .case
        .iter()
        .filter(|c| c.expect == Expect::Ask)
        .count();
    let near = corpus.case.len() - payloads;
    assert!(payloads >= 100, "{payloads} payloads");
    assert!(near >= 40, "{near} near misses");

    let env = TestEnv::start();
    let home = env.path("home");
    let project = home.join("src/app");
    std::fs::create_dir_all(&project).expect("project");
    let managed = as_root().then(|| {
        let dir = env.path("etc/rewind");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let config = dir.join("config.toml");
        std::fs::copy(&env.config, &config).expect("copy");
        config
    });
    // A configured machine: the protected-VM net written from the ZVM.
    let mut vms = env.command(&["vms"]);
    vms.env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CACHE_HOME");
    run(vms, b"").success();

    let bin = Path::new(env!("CARGO_BIN_EXE_rewind"))
        .parent()
        .expect("a directory")
        .display()
        .to_string();
    let fill = |text: &str| {
        text.replace("{home}", &home.display().to_string())
            .replace("{bin}", &bin)
            .replace("{state}", &env.path("state").display().to_string())
    };
    let mut passed = Vec::new();
    let mut asked = Vec::new();
    for case in &corpus.case {
        // The ssh configuration is the administrator's only under a managed install.
        if managed.is_none() && case.source == "ssh configuration" {
            continue;
        }
        let command = fill(&case.command);
        let cwd = match case.cwd.as_deref() {
            Some("home") => home.display().to_string(),
            None | Some("project") => project.display().to_string(),
            Some(other) => panic!("cwd {other}"),
        };
        let (host, stdin) = payload(case, &command, &cwd);
        let out = hook(&env, host, managed.as_deref(), &stdin);
        assert!(matches!(out.code, 0 | 2), "{command}: {out:#?}");
        let guarded = out.stdout.contains(SELF_GUARD) || out.stderr.contains(SELF_GUARD);
        // `{}` (or nothing) is no decision; an ask or a deny, in any host's words, is one.
        let decided = out.code != 0
            || ["\"ask\"", "\"deny\"", "\"block\"", "permissionDecision"]
                .iter()
                .any(|word| out.stdout.contains(word));
        match case.expect {
            Expect::Ask if !guarded => passed.push(format!(
                "[{}] {command} ({}): {}{}",
                case.source, case.why, out.stdout, out.stderr
            )),
            Expect::None if decided => asked.push(format!(
                "[{}] {command} ({}): {}{}",
                case.source, case.why, out.stdout, out.stderr
            )),
            _ => {}
        }
    }
    assert!(
        passed.is_empty() && asked.is_empty(),
        "{} of {payloads} payloads passed:\n{}\n\n{} of {near} near misses got a decision:\n{}",
        passed.len(),
        passed.join("\n"),
        asked.len(),
        asked.join("\n")
    );
}
