//! Configuration mistakes as the user meets them: in the hook's deny reason (which the model
//! reads) and in `rewind doctor`.

use crate::support::{TestEnv, hook_input};

/// A password written in the wrong type is still a password: neither the hook's reason nor
/// doctor's report may quote it; both name the file, line, column and key.
#[test]
fn a_misspelled_password_is_never_quoted_by_the_hook_or_doctor() {
    let env = TestEnv::start();
    for (line, secret) in [
        ("password = 8675309123", "8675309123"),
        ("password = true", "true"),
        ("password = 8675309.125", "8675309"),
        ("password = [\"hunter2\"]", "hunter2"),
        ("password = hunter2", "hunter2"),
    ] {
        std::fs::write(
            &env.config,
            format!("[zvm]\nurl = \"https://127.0.0.1:1\"\n{line}\n"),
        )
        .expect("write config");
        let hook = env.hook(&hook_input(
            "mcp__ssh__exec",
            &serde_json::json!({"host": "jp-ubuntu", "command": "reboot"}),
            "toolu_cfg",
        ));
        assert_eq!(hook.code, 0, "{hook:#?}");
        assert_eq!(hook.decision(), "deny", "{hook:#?}");
        let reason = hook.reason();
        assert!(
            reason.contains("config.toml: line 3 column 12: `zvm.password`"),
            "{reason}"
        );
        assert!(!hook.stdout.contains(secret), "{line}: {hook:#?}");
        assert!(!hook.stderr.contains(secret), "{line}: {hook:#?}");

        let doctor = env.run(&["doctor"], b"");
        doctor.failure();
        assert!(doctor.stdout.contains("`zvm.password`"), "{doctor:#?}");
        assert!(!doctor.stdout.contains(secret), "{line}: {doctor:#?}");
        assert!(!doctor.stderr.contains(secret), "{line}: {doctor:#?}");
    }
}
