//! The real Claude Code using `rewind mcp` as an MCP server, with `rewind hook` installed too:
//! the scripted model takes a checkpoint on purpose, finds its tag in the checkpoint list, and
//! plans a restore from it by the change id the server returned.

use serde_json::{Value, json};

use crate::claude::{ClaudeCode, Hook, PermissionMode, text, tool_use};
use crate::support::{TestEnv, rewind_bin};

const CHECKPOINT: &str = "toolu_e2e_mcp_checkpoint";
const LIST: &str = "toolu_e2e_mcp_list";
const PLAN: &str = "toolu_e2e_mcp_plan";
/// What the model copies from `checkpoint_vm`'s answer into the later calls (Claude Code hands
/// the model a tool's structured content, as JSON, when there is one).
const CHANGE_ID: &str = r#""change":"(mcp-[^"]+)""#;

#[test]
fn claude_code_checkpoints_lists_its_tag_and_plans_a_restore_through_rewind_mcp() {
    let env = TestEnv::start();
    env.sim
        .write_guest_file("jp-ubuntu", "/etc/app.conf", b"mode = safe\n")
        .expect("seed");
    let vars = env.hook_env();
    let mut claude = ClaudeCode::new()
        .prompt("Checkpoint jp-ubuntu before editing /etc/app.conf, then plan its restore.")
        .script([
            tool_use(
                CHECKPOINT,
                "mcp__rewind__checkpoint_vm",
                json!({"vm": "jp-ubuntu", "reason": "edit app.conf"}),
            ),
            tool_use(
                LIST,
                "mcp__rewind__list_checkpoints",
                json!({"vm": "jp-ubuntu", "change": {"$capture": CHANGE_ID}}),
            ),
            tool_use(
                PLAN,
                "mcp__rewind__recover_plan",
                json!({"vm": "jp-ubuntu", "path": "/etc/app.conf", "change": {"$capture": CHANGE_ID}}),
            ),
            text("Planned."),
        ])
        .permission_mode(PermissionMode::Default)
        .allowed_tools(["mcp__rewind"])
        .mcp_stdio("rewind", &rewind_bin(), &["mcp"], &vars)
        .hook(Hook::exec(rewind_bin()).args(["hook"]).timeout_secs(60));
    for (k, v) in &vars {
        claude = claude.env(k, v.clone());
    }
    let run = claude.run();

    // Zerto: one tagged checkpoint, made by the MCP server for Claude Code.
    let inserts = env.sim.inserts();
    assert_eq!(inserts.len(), 1, "one insert\n{}", run.describe());
    let tag = inserts[0].tag.clone();
    assert!(
        tag.starts_with("ai:mcp-")
            && tag.contains(" | mcp/")
            && tag.contains(" | edit app.conf | vm=jp-ubuntu | "),
        "{tag}"
    );
    let change = rewind::tag::change_of(&tag)
        .expect("a change id")
        .to_owned();

    // The model: a confirmed checkpoint, then its tag in the list, then a plan from it.
    let checkpointed = run.tool_result(CHECKPOINT).expect("checkpoint_vm answered");
    assert!(
        !checkpointed.is_error,
        "{checkpointed:?}\n{}",
        run.describe()
    );
    assert!(
        checkpointed.text.contains(r#""decision":"confirmed""#)
            && checkpointed
                .text
                .contains(&format!(r#""change":"{change}""#)),
        "{checkpointed:?}"
    );
    let listed = run.tool_result(LIST).expect("list_checkpoints answered");
    assert!(!listed.is_error, "{listed:?}\n{}", run.describe());
    assert!(
        listed.text.contains(&tag),
        "the model sees its tag: {listed:?}"
    );
    let planned = run.tool_result(PLAN).expect("recover_plan answered");
    assert!(!planned.is_error, "{planned:?}\n{}", run.describe());
    let checkpoint_id = inserts[0].checkpoint_id.clone().expect("written");
    assert!(
        planned.text.contains(r#""plan_id":"plan-"#)
            && planned
                .text
                .contains(&format!(r#""checkpoint":{{"id":"{checkpoint_id}""#)),
        "{planned:?}"
    );
    assert!(run.permission_denials().is_empty(), "{}", run.describe());
    assert_eq!(run.result_text(), "Planned.");
    assert!(env.sim.flr_sessions().is_empty(), "a plan mounts nothing");

    // The audit trail: the hook let rewind's own tools through, the server recorded each call.
    let audit = std::fs::read_to_string(env.path("state/audit.jsonl")).expect("audit trail");
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let served: Vec<&Value> = records
        .iter()
        .filter(|r| r["host"].as_str().is_some_and(|h| h.starts_with("mcp/")))
        .collect();
    let tools: Vec<&str> = served.iter().filter_map(|r| r["tool"].as_str()).collect();
    assert_eq!(tools, ["checkpoint_vm", "list_checkpoints", "recover_plan"]);
    assert_eq!(served[0]["change"], change.as_str());
    let hooked: Vec<&str> = records
        .iter()
        .filter(|r| r["host"] == "claude-code")
        .map(|r| r["class"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(hooked, ["read-only", "read-only", "read-only"], "{audit}");
}
