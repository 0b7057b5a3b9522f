//! A proposed catalog entry for a tool no catalog covers, from what the server says about
//! it: its MCP annotations (`readOnlyHint`, `destructiveHint`), its name and the names of
//! its arguments.
//!
//! The annotations are the server's own claim, and a claim is not proof. A tool the server
//! calls read-only but whose name or arguments say it runs or writes something (`run_script
//! {script}`) is proposed as mutating and flagged for a human; so is a tool nothing says
//! anything about.

use serde::Serialize;
use serde_json::Value;

use crate::catalog::ToolClass;

/// What `catalog scan` proposes for one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Proposal {
    /// The class to record, or `None` when a human must decide.
    pub class: Option<ToolClass>,
    /// Arguments that look like they name the VM, in schema order.
    pub vm_arg: Vec<String>,
    /// Arguments that look like they name a session an earlier call opened.
    pub session_arg: Vec<String>,
    /// Why a human should look at it before it is trusted.
    pub review: Option<String>,
    /// What the proposal rests on.
    pub because: String,
}

/// Words in a tool's name that mean it can change something.
const CHANGING_WORDS: &[&str] = &[
    "exec",
    "execute",
    "run",
    "write",
    "delete",
    "remove",
    "rm",
    "create",
    "update",
    "set",
    "put",
    "upload",
    "install",
    "uninstall",
    "restart",
    "start",
    "stop",
    "kill",
    "reboot",
    "shutdown",
    "apply",
    "deploy",
    "launch",
    "command",
    "sudo",
    "shell",
    "power",
    "revert",
    "rollback",
    "migrate",
    "clone",
    "edit",
    "move",
    "rename",
    "patch",
    "modify",
    "send",
    "push",
    "sync",
    "restore",
    "reset",
    "terminate",
    "destroy",
    "signal",
    "invoke",
    "script",
    "powershell",
    "format",
    "mount",
    "unmount",
    "attach",
    "detach",
    "enable",
    "disable",
    "reconfigure",
    "resize",
    "provision",
    "import",
    "change",
    "add",
    "insert",
    "drop",
    "truncate",
    "replace",
    "copy",
];

/// Argument names that carry a command, a script or content to write.
const CHANGING_ARGS: &[&str] = &[
    "command",
    "commands",
    "cmd",
    "cmdstring",
    "script",
    "pipeline",
    "content",
    "contents",
    "data",
    "body",
    "code",
    "shell",
    "commandline",
    "argv",
    "input",
    "stdin",
    "patch",
    "diff",
    "newstring",
    "text",
];

/// Argument names that name the machine a call acts on (compared without case, `-` or `_`).
const HOST_ARGS: &[&str] = &[
    "host",
    "hostname",
    "hostalias",
    "hosts",
    "hostnames",
    "hostpattern",
    "hostpatterns",
    "vm",
    "vmname",
    "vms",
    "vmid",
    "computername",
    "computer",
    "machine",
    "machinename",
    "server",
    "servername",
    "targethost",
    "instance",
    "instanceid",
    "instanceids",
    "node",
    "connectionname",
    "profile",
    "limit",
    "pattern",
    "remotehost",
    "address",
    "ip",
    "ipaddress",
];

/// Argument names that name a session opened by an earlier call.
const SESSION_ARGS: &[&str] = &["session", "sessionid", "sessionname", "pid", "processid"];

fn squash(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The words of a tool name in any case style: `runRemoteCommand`, `run-command`,
/// `Powershell-Tool`, `ssh_execute`.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            words.push(std::mem::take(&mut word));
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        word.push(c.to_ascii_lowercase());
    }
    words.push(word);
    words.retain(|w| !w.is_empty());
    words
}

/// Proposes an entry for one tool of a `tools/list` answer.
pub(crate) fn propose(tool: &Value) -> Proposal {
    let name = tool["name"].as_str().unwrap_or_default();
    let properties: Vec<&str> = tool["inputSchema"]["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let annotations = &tool["annotations"];
    let read_only_hint = annotations["readOnlyHint"].as_bool();
    let destructive_hint = annotations["destructiveHint"].as_bool();

    let changing_word = words(name)
        .into_iter()
        .find(|w| CHANGING_WORDS.contains(&w.as_str()));
    let changing_arg = properties
        .iter()
        .find(|p| CHANGING_ARGS.contains(&squash(p).as_str()))
        .map(|p| (*p).to_owned());
    let vm_arg: Vec<String> = properties
        .iter()
        .filter(|p| {
            let p = squash(p);
            HOST_ARGS.contains(&p.as_str()) || (p.contains("host") && !p.contains("port"))
        })
        .map(|p| (*p).to_owned())
        .collect();
    let session_arg: Vec<String> = properties
        .iter()
        .filter(|p| SESSION_ARGS.contains(&squash(p).as_str()))
        .map(|p| (*p).to_owned())
        .collect();
    let says_changing = match (&changing_word, &changing_arg) {
        (Some(word), _) => Some(format!("its name says {word:?}")),
        (None, Some(arg)) => Some(format!("its argument {arg:?} carries what to run or write")),
        (None, None) => None,
    };

    let (class, review, because) = match (read_only_hint, destructive_hint, says_changing) {
        (Some(true), _, Some(why)) => (
            Some(ToolClass::Mutating),
            Some(format!("the server annotates it read-only, but {why}")),
            String::from("readOnlyHint contradicted"),
        ),
        (Some(true), _, None) => (
            Some(ToolClass::ReadOnly),
            None,
            String::from("readOnlyHint, and nothing in its name or arguments says otherwise"),
        ),
        (_, Some(true), _) => (
            Some(ToolClass::Mutating),
            None,
            String::from("destructiveHint"),
        ),
        (Some(false), _, _) => (
            Some(ToolClass::Mutating),
            None,
            String::from("readOnlyHint false"),
        ),
        (None, _, Some(why)) => (
            Some(ToolClass::Mutating),
            None,
            format!("unannotated; {why}"),
        ),
        (None, _, None) => (
            None,
            Some(String::from(
                "nothing says whether it can change a VM: no annotation, no telling name or argument",
            )),
            String::from("unannotated"),
        ),
    };
    Proposal {
        class,
        vm_arg,
        session_arg,
        review,
        because,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, props: &[&str], annotations: &Value) -> Value {
        let properties: serde_json::Map<String, Value> = props
            .iter()
            .map(|p| ((*p).to_owned(), json!({"type": "string"})))
            .collect();
        json!({"name": name, "inputSchema": {"type": "object", "properties": properties}, "annotations": annotations})
    }

    #[test]
    fn names_split_in_every_case_style() {
        assert_eq!(words("runRemoteCommand"), ["run", "remote", "command"]);
        assert_eq!(words("Powershell-Tool"), ["powershell", "tool"]);
        assert_eq!(words("ssh_execute_sudo"), ["ssh", "execute", "sudo"]);
        assert_eq!(words("vm_power_on"), ["vm", "power", "on"]);
    }

    #[test]
    fn an_annotation_alone_never_proves_read_only() {
        let p = propose(&tool(
            "run_script",
            &["target_host", "script"],
            &json!({"readOnlyHint": true}),
        ));
        assert_eq!(p.class, Some(ToolClass::Mutating));
        assert!(
            p.review
                .as_deref()
                .unwrap_or_default()
                .contains("annotates it read-only"),
            "{p:?}"
        );
        assert_eq!(p.vm_arg, ["target_host"]);
        let p = propose(&tool(
            "show",
            &["host", "command"],
            &json!({"readOnlyHint": true}),
        ));
        assert_eq!(
            p.class,
            Some(ToolClass::Mutating),
            "a command argument contradicts too"
        );
        let p = propose(&tool(
            "show_status",
            &["host"],
            &json!({"readOnlyHint": true}),
        ));
        assert_eq!((p.class, p.review), (Some(ToolClass::ReadOnly), None));
    }

    #[test]
    fn host_like_and_session_like_arguments_are_found() {
        let p = propose(&tool(
            "x_exec",
            &[
                "hostAlias",
                "localPath",
                "hostPort",
                "vm_name",
                "sessionName",
            ],
            &json!({}),
        ));
        assert_eq!(p.vm_arg, ["hostAlias", "vm_name"]);
        assert_eq!(p.session_arg, ["sessionName"]);
        let p = propose(&tool("lookup", &["query"], &json!(null)));
        assert_eq!(p.class, None);
        assert!(p.review.is_some());
    }
}
