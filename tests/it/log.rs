//! `rewind log` filters and `rewind completions`.

use serde_json::json;

use crate::support::{TestEnv, hook_input};

#[test]
fn log_filters_by_session_and_time_and_refuses_an_unknown_decision() {
    let env = TestEnv::start();
    let mut input: serde_json::Value = serde_json::from_slice(&hook_input(
        "mcp__ssh__read_file",
        &json!({"host": "jp-ubuntu", "path": "/etc/hosts"}),
        "toolu_log1",
    ))
    .expect("JSON");
    input["session_id"] = json!("3f2a9c1e-aaaa");
    env.hook(input.to_string().as_bytes());
    input["session_id"] = json!("77777777-bbbb");
    input["tool_use_id"] = json!("toolu_log2");
    env.hook(input.to_string().as_bytes());

    let lines = |args: &[&str]| -> usize {
        let mut all = vec!["log", "--json"];
        all.extend_from_slice(args);
        let run = env.run(&all, b"");
        run.success();
        run.stdout.lines().count()
    };
    assert_eq!(lines(&[]), 2);
    assert_eq!(lines(&["--session", "3f2a9c1e"]), 1);
    assert_eq!(lines(&["--session", "nope"]), 0);
    assert_eq!(lines(&["--since", "1h"]), 2);
    assert_eq!(lines(&["--since", "2999-01-01T00:00:00Z"]), 0);
    assert_eq!(lines(&["--decision", "none"]), 2);

    let bad = env.run(&["log", "--decision", "foo"], b"");
    assert_eq!(bad.code, 2, "{bad:#?}");
    assert!(
        bad.stderr.contains("ran") && bad.stderr.contains("context"),
        "{bad:#?}"
    );
    let bad_time = env.run(&["log", "--since", "yesterday-ish"], b"");
    bad_time.failure();
    assert!(bad_time.stderr.contains("ISO-8601"), "{bad_time:#?}");
}

#[test]
fn completions_are_printed_for_each_shell() {
    let env = TestEnv::start();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = env.run(&["completions", shell], b"");
        run.success();
        assert!(
            run.stdout.contains("trust") && run.stdout.contains("uninstall"),
            "{shell}: {run:#?}"
        );
    }
}
