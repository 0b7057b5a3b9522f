//! Host tool names in neutral words, shared by the dialects: an MCP tool becomes
//! `mcp__<server>__<tool>` with the server named, a host's shell tool becomes `Bash` (or
//! `PowerShell`) with a string `command`, and a host's local file tool becomes the name the
//! catalog knows as local. What a dialect cannot place keeps the host's own name, which the
//! catalog treats as unlisted (an ask).

use serde_json::{Map, Value};

/// The neutral name of an MCP tool.
pub(crate) fn mcp(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// A shell tool's arguments with `command` as one string: a string stays as it is; an argv
/// list `[shell, -c|-lc, script]` becomes the script; any other list is joined with each word
/// quoted for a POSIX shell. Other keys are kept.
pub(crate) fn shell_input(mut input: Value, key: &str) -> Value {
    let command = input.get(key).cloned();
    let text = match command {
        Some(Value::String(text)) => Some(text),
        Some(Value::Array(words)) => argv_to_script(&words),
        _ => None,
    };
    if let (Some(text), Some(map)) = (text, input.as_object_mut()) {
        map.remove(key);
        map.insert("command".to_owned(), Value::String(text));
    }
    input
}

fn argv_to_script(words: &[Value]) -> Option<String> {
    let words: Vec<&str> = words.iter().map(Value::as_str).collect::<Option<_>>()?;
    if let [shell, flag, script] = words.as_slice() {
        let shell = shell.rsplit('/').next().unwrap_or(shell);
        if matches!(shell, "sh" | "bash" | "zsh" | "dash") && matches!(*flag, "-c" | "-lc" | "-ic")
        {
            return Some((*script).to_owned());
        }
    }
    // A word shlex cannot quote (one holding a NUL) leaves the list as sent: the classifier asks.
    words
        .iter()
        .map(|w| shlex::try_quote(w).ok())
        .collect::<Option<Vec<_>>>()
        .map(|words| words.join(" "))
}

/// Tool arguments that a host may send as a JSON object or as a JSON string holding one: the
/// object either way; a string that is not a JSON object stays a string (the catalog then
/// finds no VM in it and asks).
pub(crate) fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => Value::String(text.clone()),
        },
        Some(other) => other.clone(),
        None => Value::Object(Map::new()),
    }
}

/// The text a host that cannot ask shows instead of an ask.
pub(crate) fn ask_as_deny(reason: &str, host: &str) -> String {
    format!(
        "{reason} {host} cannot ask a human before a call, so rewind refuses it: a human must run \
         this call, or approve it in a host that can ask."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shell_argv_becomes_the_script_it_runs() {
        let argv = json!({"command": ["bash", "-lc", "ssh web01 reboot"], "workdir": "/"});
        assert_eq!(
            shell_input(argv, "command"),
            json!({"command": "ssh web01 reboot", "workdir": "/"})
        );
        let plain = json!({"command": ["/usr/bin/ssh", "web01", "rm -rf /tmp/x"]});
        assert_eq!(
            shell_input(plain, "command"),
            json!({"command": "/usr/bin/ssh web01 'rm -rf /tmp/x'"})
        );
        let cmd = json!({"cmd": "ssh web01 reboot", "tty": false});
        assert_eq!(
            shell_input(cmd, "cmd"),
            json!({"tty": false, "command": "ssh web01 reboot"})
        );
        // Nothing usable: left as sent (the classifier asks).
        assert_eq!(
            shell_input(json!({"command": 3}), "command"),
            json!({"command": 3})
        );
        assert_eq!(
            shell_input(json!({"command": ["a", 1]}), "command"),
            json!({"command": ["a", 1]})
        );
        assert_eq!(
            shell_input(json!({"command": ["ssh", "a\u{0}b"]}), "command"),
            json!({"command": ["ssh", "a\u{0}b"]})
        );
        // Every word comes back whole when the script is split again.
        let words = ["ssh", "web01", "echo 'it''s' \"$HOME\"", "", "a\\b"];
        let joined = shell_input(json!({"command": words}), "command");
        let script = joined["command"].as_str().expect("a script");
        assert_eq!(shlex::split(script).expect("splits"), words);
    }

    #[test]
    fn arguments_sent_as_a_json_string_are_read_as_the_object() {
        assert_eq!(
            arguments(Some(&json!("{\"host\":\"web01\"}"))),
            json!({"host": "web01"})
        );
        assert_eq!(arguments(Some(&json!("not json"))), json!("not json"));
        assert_eq!(arguments(Some(&json!({"a": 1}))), json!({"a": 1}));
        assert_eq!(arguments(None), json!({}));
    }
}
