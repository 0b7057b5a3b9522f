//! `rewind catalog scan` against the MCP test stub, configured the way Claude Code keeps its
//! servers: the user's `~/.claude.json`, its per-project entries and the project's
//! `.mcp.json`. The stub's `annotated` flavour has a read-only tool, a destructive one, two
//! unannotated ones and one whose read-only annotation its name and arguments contradict.

use std::path::Path;

use serde_json::json;

use crate::support::TestEnv;

fn stub() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e/mcp-stub.mjs")
        .display()
        .to_string()
}

/// The secret every server gets in its environment; it must never be printed.
const SECRET: &str = "tok-8675309-s3cret";

fn configure(env: &TestEnv) {
    let project = env.dir.path().display().to_string();
    let claude = json!({
        "mcpServers": {
            "ssh": {"command": "node", "args": ["/nonexistent/user-level-ssh"]},
            "gone": {"command": "/nonexistent/mcp-server", "args": ["--password", SECRET]}
        },
        "projects": {project: {"mcpServers": {
            "ssh": {"command": "node", "args": [stub(), "--name", "ssh"], "env": {"API_TOKEN": SECRET}}
        }}}
    });
    std::fs::create_dir_all(env.path("home")).expect("home");
    std::fs::write(env.path("home/.claude.json"), claude.to_string()).expect("write");
    let mcp = json!({"mcpServers": {
        "ops-tools": {"command": "node", "args": [stub(), "--flavor", "annotated"], "env": {"OPS_PASSWORD": SECRET}}
    }});
    std::fs::write(env.path(".mcp.json"), mcp.to_string()).expect("write");
}

/// A timestamp as the scan writes it (backup names use `-` for `:` and `.`).
const TIME: &str = r"\d{4}-\d\d-\d\dT\d\d[:-]\d\d[:-]\d\d[.-]\d{3}Z";

#[test]
fn scan_reports_coverage_and_proposes_entries_without_trusting_annotations_alone() {
    let env = TestEnv::start();
    configure(&env);
    let run = env.run(&["catalog", "scan", "--timeout", "60"], b"");
    assert_eq!(run.code, 1, "one configured server cannot start: {run:#?}");
    assert!(
        run.stderr
            .contains("1 server(s) could not be scanned (gone)"),
        "{run:#?}"
    );
    assert!(
        !run.stdout.contains(SECRET) && !run.stderr.contains(SECRET),
        "{run:#?}"
    );
    let user_catalog = env.path("home/.config/rewind/catalog.toml");
    assert!(!user_catalog.exists(), "nothing is written without --write");
    let temp = regex_escape(&env.dir.path().display().to_string());
    insta::with_settings!({filters => vec![(temp.as_str(), "[tmp]"), (TIME, "[time]")]}, {
        insta::assert_snapshot!("scan_report", run.stdout);
    });

    // --write: a backup of the user's catalog, then the proposals appended; it still loads.
    std::fs::create_dir_all(user_catalog.parent().expect("dir")).expect("mkdir");
    std::fs::write(&user_catalog, "# mine\n").expect("write");
    let write = env.run(&["catalog", "scan", "--timeout", "60", "--write"], b"");
    assert_eq!(write.code, 1, "still one server unscanned: {write:#?}");
    assert!(!write.stdout.contains(SECRET), "{write:#?}");
    let backups: Vec<_> = std::fs::read_dir(user_catalog.parent().expect("dir"))
        .expect("list")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("catalog.toml.rewind-backup-")
        })
        .collect();
    assert_eq!(backups.len(), 1, "{write:#?}");
    assert_eq!(
        std::fs::read_to_string(backups[0].path()).expect("backup"),
        "# mine\n"
    );
    let written = std::fs::read_to_string(&user_catalog).expect("catalog");
    let temp = regex_escape(&env.dir.path().display().to_string());
    insta::with_settings!({filters => vec![(temp.as_str(), "[tmp]"), (TIME, "[time]")]}, {
        insta::assert_snapshot!("scan_written_catalog", written);
    });
    env.run(&["catalog", "lint"], b"").success();

    // What it wrote is what the hook now uses: the contradicted tool is mutating.
    let check = env.run(
        &[
            "check",
            "mcp__ops-tools__run_script",
            "--input",
            r#"{"target_host": "jp-ubuntu", "script": "rm -rf /"}"#,
        ],
        b"",
    );
    assert!(check.stdout.contains("class:    mutating"), "{check:#?}");
    assert!(check.stdout.contains("jp-ubuntu"), "{check:#?}");

    // A second scan finds only the tool a human must decide on.
    let again = env.run(&["catalog", "scan", "--timeout", "60"], b"");
    assert!(
        again.stdout.contains("1 tool(s) in no catalog"),
        "{again:#?}"
    );
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = r"\.+*?()|[]{}^$".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// A server that never answers is given up on at the timeout and reported, and the scan goes
/// on to the next one.
#[test]
fn a_server_that_never_answers_is_reported_at_the_timeout() {
    let env = TestEnv::start();
    let file = env.path("servers.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"silent": {"command": "sleep", "args": ["60"]}}}).to_string(),
    )
    .expect("write");
    let run = env.run(
        &[
            "catalog",
            "scan",
            "--timeout",
            "1",
            "--mcp-config",
            &file.display().to_string(),
        ],
        b"",
    );
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr
            .contains("1 server(s) could not be scanned (silent)"),
        "{run:#?}"
    );
    assert!(
        run.stdout
            .contains("server silent (stdio: sleep (+1 arguments))")
            && run
                .stdout
                .contains("not scanned: no answer to initialize within 1 s"),
        "{run:#?}"
    );
}

/// A newcomer's catch-all read-only entry switches guarding off for every shipped mutating
/// tool: legal, but `catalog lint` and `doctor` say so by name.
#[test]
fn lint_and_doctor_name_a_user_entry_that_makes_shipped_mutating_tools_read_only() {
    let env = TestEnv::start();
    let mine = env.path("mine.toml");
    std::fs::write(
        &mine,
        "[[read_only]]\nserver = \"*\"\ntool = \"*\"\n\n[[read_only]]\nserver = \"weather\"\ntool = \"forecast\"\n",
    )
    .expect("write");
    env.write_config(&crate::support::Setup {
        hook: format!("catalogs = [{:?}]", mine.display().to_string()),
        ..crate::support::Setup::default()
    });
    let lint = env.run(&["catalog", "lint"], b"");
    lint.success();
    let warnings: Vec<&str> = lint
        .stdout
        .lines()
        .filter(|l| l.starts_with("warn"))
        .collect();
    assert_eq!(warnings.len(), 1, "only the catch-all: {lint:#?}");
    assert!(
        warnings[0].contains("server \"*\" tool \"*\"")
            && warnings[0].contains("mine.toml")
            && warnings[0].contains("read-only"),
        "{lint:#?}"
    );
    let doctor = env.run(&["doctor"], b"");
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l.starts_with("warn  catalog guard off")
                && l.contains("server \"*\" tool \"*\"")),
        "{doctor:#?}"
    );
}

/// `doctor` names a configured server whose tools no catalog covers, and passes a covered one,
/// from the last scan: it starts no server itself (a project's `.mcp.json` is not its to run).
#[test]
fn doctor_reports_configured_servers_no_catalog_covers() {
    let env = TestEnv::start();
    let marker = env.path("started");
    let mcp = json!({"mcpServers": {
        "ssh": {"command": "node", "args": [stub(), "--name", "ssh"]},
        "ops-tools": {"command": "node", "args": [stub(), "--flavor", "annotated"], "env": {"OPS_PASSWORD": SECRET}},
        "toucher": {"command": "touch", "args": [marker.display().to_string()]}
    }});
    std::fs::write(env.path(".mcp.json"), mcp.to_string()).expect("write");
    let before = env.run(&["doctor"], b"");
    assert!(!marker.exists(), "doctor started a server: {before:#?}");
    assert!(
        before
            .stdout
            .contains("warn  mcp server ops-tools: tools unknown: not scanned"),
        "{before:#?}"
    );
    std::fs::remove_file(&marker).ok();
    let scan = env.run(&["catalog", "scan", "--timeout", "60"], b"");
    assert_eq!(scan.code, 1, "toucher is no MCP server: {scan:#?}");
    assert!(marker.exists(), "scan starts the servers");
    let doctor = env.run(&["doctor"], b"");
    assert!(!doctor.stdout.contains(SECRET), "{doctor:#?}");
    assert!(
        doctor.stdout.contains(
            "warn  mcp server ops-tools: 6 of its 6 tools are in no catalog, so the hook asks before each"
        ),
        "{doctor:#?}"
    );
    assert!(
        doctor
            .stdout
            .contains("ok    mcp servers: 1 of 3 configured servers have every tool in a catalog"),
        "{doctor:#?}"
    );
    // The server the scan could not list is named with why, not as never scanned.
    assert!(
        doctor
            .stdout
            .lines()
            .any(|l| l
                .starts_with("warn  mcp server toucher: tools unknown: the last scan failed: ")),
        "{doctor:#?}"
    );
}

/// A server whose program cannot be started is reported with the command as configured, so
/// the wrong path can be found and fixed; a command with more than a path in it (a variable
/// assignment, white space) is not repeated; the other servers are still scanned.
#[test]
fn a_server_that_cannot_start_is_named_by_its_configured_command() {
    let env = TestEnv::start();
    let file = env.path("servers.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {
            "gone": {"command": "/opt/nowhere/bin/ops-mcp"},
            "glued": {"command": "TOKEN=s3cr3t-value ops-mcp"},
        }})
        .to_string(),
    )
    .expect("write");
    let run = env.run(
        &[
            "catalog",
            "scan",
            "--timeout",
            "5",
            "--mcp-config",
            &file.display().to_string(),
        ],
        b"",
    );
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("2 server(s) could not be scanned"),
        "{run:#?}"
    );
    assert!(
        run.stdout
            .contains("not scanned: cannot start `/opt/nowhere/bin/ops-mcp`"),
        "{run:#?}"
    );
    assert!(
        run.stdout
            .contains("not scanned: cannot start its configured command"),
        "{run:#?}"
    );
    assert!(!run.stdout.contains("s3cr3t-value"), "{run:#?}");
    assert!(!run.stderr.contains("s3cr3t-value"), "{run:#?}");
}

/// A user entry that makes a tool read-only although its server annotates it
/// `destructiveHint: true` is flagged for review by name, with the catalog it is in.
#[test]
fn scan_flags_a_user_read_only_entry_for_a_tool_its_server_calls_destructive() {
    let env = TestEnv::start();
    let mine = env.path("mine.toml");
    std::fs::write(
        &mine,
        "[[read_only]]\nserver = \"ops-tools\"\ntool = \"restart_service\"\n\n[[read_only]]\nserver = \"ops-tools\"\ntool = \"show_status\"\n",
    )
    .expect("write");
    env.write_config(&crate::support::Setup {
        hook: format!("catalogs = [{:?}]", mine.display().to_string()),
        ..crate::support::Setup::default()
    });
    let mcp = json!({"mcpServers": {
        "ops-tools": {"command": "node", "args": [stub(), "--flavor", "annotated"]}
    }});
    std::fs::write(env.path(".mcp.json"), mcp.to_string()).expect("write");
    let run = env.run(&["catalog", "scan", "--timeout", "60"], b"");
    run.success();
    let reviews: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("REVIEW:") && l.contains("destructiveHint"))
        .collect();
    assert_eq!(reviews.len(), 1, "only restart_service: {run:#?}");
    assert!(
        reviews[0].contains("mine.toml classifies it read-only"),
        "{run:#?}"
    );
    let restart = run
        .stdout
        .lines()
        .position(|l| l.trim_start().starts_with("restart_service"))
        .expect("restart_service listed");
    assert!(
        run.stdout.lines().nth(restart + 1) == Some(reviews[0]),
        "the review follows its tool: {run:#?}"
    );
    assert!(run.stdout.contains("1 catalog entry to review"), "{run:#?}");
}
