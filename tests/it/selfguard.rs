//! Guarding the guard: every call that would undo rewind itself, in every host's dialect, fed
//! to the real `rewind hook --host <host>`. Each asks (Codex, which cannot ask, refuses) and
//! says what it protects; the ordinary calls beside them get no decision at all. One snapshot
//! per host.

use serde_json::{Map, Value, json};

use crate::hook::regex_escape;
use crate::hook_hosts::{Spelling, outcome, respell};
use crate::support::{TestEnv, hook_input};

/// Which hosts a case is spelled for: the ones whose tools can carry it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hosts {
    All,
    /// Hosts with a PowerShell tool (Claude Code, Copilot CLI).
    PowerShell,
    /// Claude Code's own tools (MultiEdit).
    ClaudeOnly,
    /// `apply_patch` (Codex CLI, Copilot CLI).
    Patch,
    /// Hosts that name an MCP call's server (not Cursor, whose calls are server `unnamed`).
    NamedServers,
}

impl Hosts {
    fn includes(self, host: &str) -> bool {
        match self {
            Hosts::All => true,
            Hosts::PowerShell => matches!(host, "claude-code" | "copilot"),
            Hosts::ClaudeOnly => host == "claude-code",
            Hosts::Patch => matches!(host, "codex" | "copilot"),
            Hosts::NamedServers => host != "cursor",
        }
    }
}

struct Case {
    name: &'static str,
    tool: &'static str,
    input: Value,
    hosts: Hosts,
    /// Whether rewind must stand in the way (ask, or deny where the host cannot ask).
    asks: bool,
}

fn bash(name: &'static str, command: &str, asks: bool) -> Case {
    Case {
        name,
        tool: "Bash",
        input: json!({"command": command}),
        hosts: Hosts::All,
        asks,
    }
}

/// `rewind restore-vm` typed by an agent, however it is wrapped.
fn restore_vm_cases() -> Vec<Case> {
    vec![
        bash(
            "rewind_restore_vm",
            "rewind restore-vm web01 --change toolu_1 --yes",
            true,
        ),
        bash(
            "rewind_restore_vm_preview_in_a_subshell",
            "bash -c 'rewind --config /etc/rewind/config.toml restore-vm db01 --checkpoint 1042 --preview --yes'",
            true,
        ),
        Case {
            name: "powershell_rewind_restore_vm",
            tool: "PowerShell",
            input: json!({"command": "& rewind.exe restore-vm win2019-1 --change toolu_9 --yes"}),
            hosts: Hosts::PowerShell,
            asks: true,
        },
    ]
}

fn cases(env: &TestEnv) -> Vec<Case> {
    let home = env.path("home").display().to_string();
    let tmp = env.dir.path().display().to_string();
    let zvm = env.sim.url();
    let mut cases = restore_vm_cases();
    cases.extend(vec![
        bash(
            "rewind_uninstall",
            "rewind uninstall --host claude-code",
            true,
        ),
        bash(
            "rewind_recover",
            "rewind recover --vm web01 --change toolu_1 --path /etc/shadow",
            true,
        ),
        bash(
            "rewind_flr_end_under_sudo",
            "sudo -u root rewind flr end 1234",
            true,
        ),
        bash(
            "rewind_catalog_add",
            "rewind catalog add --server ssh --tool exec --read-only",
            true,
        ),
        bash(
            "rewind_catalog_scan_write",
            "rewind catalog scan --write",
            true,
        ),
        bash(
            "rewind_trust",
            "rewind --config /tmp/c.toml trust https://zvm.example",
            true,
        ),
        bash(
            "rewind_install_by_path",
            "/usr/local/bin/rewind install --scope user",
            true,
        ),
        bash(
            "redirect_into_claude_settings",
            r#"echo '{"disableAllHooks": true}' > ~/.claude/settings.json"#,
            true,
        ),
        bash(
            "tee_into_catalog",
            r#"printf '[[read_only]]\nserver = "*"\ntool = "*"\n' | tee -a ~/.config/rewind/catalog.toml"#,
            true,
        ),
        bash(
            "sed_in_place_on_config",
            "sed -i 's/budget_secs = 150/budget_secs = 1/' \"$HOME/.config/rewind/config.toml\"",
            true,
        ),
        bash("rm_codex_hooks", "rm -f ~/.codex/hooks.json", true),
        bash(
            "mv_project_settings_away",
            "mv .claude/settings.json /tmp/x.json",
            true,
        ),
        bash(
            "cp_over_gemini_settings",
            "cp /tmp/evil.json ~/.gemini/settings.json",
            true,
        ),
        bash("rm_rf_claude_dir", "cd /tmp && rm -rf ~/.claude", true),
        // A relative path read from where a `cd` went: home (`cd` alone), a named directory.
        bash("cd_home_rm_rf_everything", "cd && rm -rf *", true),
        bash(
            "cd_claude_dir_rm_settings",
            "cd ~/.claude && rm -f settings.json",
            true,
        ),
        bash(
            "truncate_audit_trail",
            &format!("truncate -s 0 {tmp}/state/audit.jsonl"),
            true,
        ),
        bash(
            "nested_shell_writes_cursor_hooks",
            "bash -c 'echo {} > ~/.cursor/hooks.json'",
            true,
        ),
        bash(
            "copilot_policy_dropin",
            "sudo tee /etc/github-copilot/policy.d/zz.json < /tmp/x.json",
            true,
        ),
        bash("curl_to_the_zvm", &format!("curl -sk {zvm}/v1/vpgs"), true),
        bash(
            "python_to_the_zvm",
            &format!(
                "python3 -c \"import requests; print(requests.get('{zvm}/v1/vms', verify=False).text)\""
            ),
            true,
        ),
        bash(
            "cat_token_cache",
            &format!("cat {tmp}/cache/rewind/tokens/*.json"),
            true,
        ),
        bash("echo_zvm_password", "echo \"$REWIND_ZVM_PASSWORD\"", true),
        Case {
            name: "powershell_set_content_settings",
            tool: "PowerShell",
            input: json!({"command": r"Set-Content -Path $env:USERPROFILE\.claude\settings.json -Value '{}'"}),
            hosts: Hosts::PowerShell,
            asks: true,
        },
        Case {
            name: "powershell_remove_catalog",
            tool: "PowerShell",
            input: json!({"command": "Remove-Item ~/.config/rewind/catalog.toml -Force"}),
            hosts: Hosts::PowerShell,
            asks: true,
        },
        Case {
            name: "powershell_irm_to_the_zvm",
            tool: "PowerShell",
            input: json!({"command": format!("Invoke-RestMethod -Uri {zvm}/v1/vpgs -SkipCertificateCheck")}),
            hosts: Hosts::PowerShell,
            asks: true,
        },
        Case {
            name: "edit_user_settings",
            tool: "Edit",
            input: json!({"file_path": format!("{home}/.claude/settings.json"), "old_string": "\"hooks\"", "new_string": "\"disableAllHooks\": true, \"hooks\""}),
            hosts: Hosts::All,
            asks: true,
        },
        Case {
            name: "write_catalog",
            tool: "Write",
            input: json!({"file_path": format!("{home}/.config/rewind/catalog.toml"), "content": "[[read_only]]\nserver = \"*\"\ntool = \"*\"\n"}),
            hosts: Hosts::All,
            asks: true,
        },
        Case {
            name: "multiedit_project_local_settings",
            tool: "MultiEdit",
            input: json!({"file_path": "/home/dev/ops/.claude/settings.local.json", "edits": []}),
            hosts: Hosts::ClaudeOnly,
            asks: true,
        },
        Case {
            name: "read_token_cache",
            tool: "Read",
            input: json!({"file_path": format!("{tmp}/cache/rewind/token-1.json")}),
            hosts: Hosts::All,
            asks: true,
        },
        Case {
            name: "apply_patch_to_hooks",
            tool: "apply_patch",
            input: json!({"command": "*** Begin Patch\n*** Update File: /home/dev/.codex/hooks.json\n@@\n-  \"hooks\": {\n+  \"hooks\": {}, \"x\": {\n*** End Patch\n"}),
            hosts: Hosts::Patch,
            asks: true,
        },
        Case {
            name: "mcp_rewind_recover_file",
            tool: "mcp__rewind__recover_file",
            input: json!({"plan_id": "p1", "confirm": true, "confirm_id": "toolu_1"}),
            hosts: Hosts::All,
            asks: true,
        },
        Case {
            name: "mcp_rewind_flr_end",
            tool: "mcp__rewind__flr_end",
            input: json!({"session": "s1"}),
            hosts: Hosts::All,
            asks: true,
        },
        Case {
            name: "mcp_command_server_removes_hooks",
            tool: "mcp__shell__shell_execute",
            input: json!({"command": ["rm", "-f", "/home/dev/.cursor/hooks.json"]}),
            hosts: Hosts::NamedServers,
            asks: true,
        },
        Case {
            name: "mcp_fetch_the_zvm",
            tool: "mcp__fetch__fetch",
            input: json!({"url": format!("{zvm}/v1/session/add")}),
            hosts: Hosts::All,
            asks: true,
        },
    ]);
    // Ordinary calls: no decision, however near they come to rewind's files.
    cases.extend([
        bash("ordinary_ls_claude_dir", "ls -la ~/.claude", false),
        bash("ordinary_cat_settings", "cat ~/.claude/settings.json", false),
        bash("ordinary_sed_print_config", "sed -n 1,5p ~/.config/rewind/config.toml", false),
        bash("ordinary_redirect", "echo hi > notes.txt && git commit -am fix", false),
        bash("ordinary_rewind_log", "rewind log --since 1h", false),
        bash("ordinary_cd_rm_build", "cd ~/src/app && rm -rf build", false),
        bash(
            "ordinary_rewind_check",
            "rewind check --command 'ssh web01 uptime'",
            false,
        ),
        bash("ordinary_curl_elsewhere", "curl -s https://example.com/", false),
        bash("ordinary_cp_from_settings", "cp ~/.claude/settings.json /tmp/backup.json", false),
        Case {
            name: "ordinary_mcp_command_server",
            tool: "mcp__shell__shell_execute",
            input: json!({"command": ["ls", "/home/dev/.cursor"]}),
            hosts: Hosts::NamedServers,
            asks: false,
        },
        Case {
            name: "ordinary_edit_source",
            tool: "Edit",
            input: json!({"file_path": "/home/dev/ops/src/main.rs", "old_string": "a", "new_string": "b"}),
            hosts: Hosts::All,
            asks: false,
        },
        Case {
            name: "ordinary_write_readme",
            tool: "Write",
            input: json!({"file_path": "/home/dev/ops/README.md", "content": "# ops\n"}),
            hosts: Hosts::All,
            asks: false,
        },
        Case {
            name: "ordinary_read_settings",
            tool: "Read",
            input: json!({"file_path": format!("{home}/.claude/settings.json")}),
            hosts: Hosts::All,
            asks: false,
        },
    ]);
    cases
}

/// Whether the host's answer stands in the call's way.
fn stands_in_the_way(row: &Value) -> bool {
    let stdout = &row["stdout"];
    let text = stdout.to_string();
    row["exit_code"] == 2
        || ["\"ask\"", "\"deny\"", "\"block\""]
            .iter()
            .any(|word| text.contains(word))
}

fn rows_for(host: &str, spelling: Option<Spelling>) {
    let env = TestEnv::start();
    let mut rows = Map::new();
    for case in cases(&env) {
        // Codex CLI's only file tool is apply_patch.
        let codex_file_tool = host == "codex" && matches!(case.tool, "Edit" | "Write" | "Read");
        if !case.hosts.includes(host) || codex_file_tool {
            continue;
        }
        let claude = hook_input(case.tool, &case.input, "toolu_01SELFGUARD");
        let stdin = match spelling {
            Some(spelling) => respell(spelling, &claude),
            None => claude,
        };
        let run = env.run(&["hook", "--host", host], &stdin);
        let row = outcome(&run);
        assert_eq!(
            stands_in_the_way(&row),
            case.asks,
            "{host} {}: {row:#}",
            case.name
        );
        if case.asks {
            assert!(
                row.to_string().contains("rewind"),
                "the answer names rewind: {row:#}"
            );
        }
        rows.insert(case.name.to_owned(), row);
    }
    let tmp = regex_escape(&env.dir.path().display().to_string());
    let filters = vec![
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[port]"),
        (tmp.as_str(), "[tmp]"),
        (r"--change rewind-\d+", "--change rewind-[pid]"),
    ];
    insta::with_settings!({ filters => filters, snapshot_suffix => host }, {
        insta::assert_json_snapshot!("self_protection", Value::Object(rows));
    });
}

#[test]
fn self_protection_for_claude_code() {
    rows_for("claude-code", None);
}

#[test]
fn self_protection_for_codex() {
    rows_for("codex", Some(Spelling::Codex));
}

#[test]
fn self_protection_for_gemini() {
    rows_for("gemini", Some(Spelling::Gemini));
}

#[test]
fn self_protection_for_copilot() {
    rows_for("copilot", Some(Spelling::Copilot));
}

#[test]
fn self_protection_for_cursor() {
    rows_for("cursor", Some(Spelling::Cursor));
}
