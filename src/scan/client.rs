//! Just enough of an MCP client to ask a server for its tools: `initialize`,
//! `notifications/initialized`, then `tools/list` page by page, under one deadline.
//!
//! Over stdio the server is started with its configured command, arguments and environment,
//! newline-delimited JSON-RPC on its stdin and stdout; its stderr is discarded (it may echo
//! secrets) and it is killed when the list is in or the deadline passes. Over HTTP (the
//! streamable transport) each message is a POST; an answer may be JSON or an event stream.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::servers::Transport;
use crate::deadline::Deadline;

/// The protocol version offered; servers answer with the one they speak.
const PROTOCOL: &str = "2025-06-18";
/// Most pages of tools read from one server.
const MAX_PAGES: usize = 50;
/// Longest line read from a server (a tools/list page with long schemas fits).
const MAX_LINE: usize = 8 * 1024 * 1024;

/// The `tools` of every `tools/list` page.
pub(crate) fn list_tools(transport: &Transport, deadline: &Deadline) -> anyhow::Result<Vec<Value>> {
    match transport {
        Transport::Stdio { command, args, env } => {
            let mut session = Stdio_::start(command, args, env)?;
            let tools = list_over(&mut session, deadline);
            session.stop();
            tools
        }
        Transport::Http { url, headers } => {
            let mut session = Http {
                url: url.clone(),
                headers: headers.clone(),
                session: None,
            };
            list_over(&mut session, deadline)
        }
    }
}

/// One request/answer exchange.
trait Exchange {
    fn request(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
        deadline: &Deadline,
    ) -> anyhow::Result<Value>;
    fn notify(&mut self, method: &str) -> anyhow::Result<()>;
}

fn list_over(session: &mut impl Exchange, deadline: &Deadline) -> anyhow::Result<Vec<Value>> {
    session.request(
        1,
        "initialize",
        json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "rewind-catalog-scan", "version": env!("CARGO_PKG_VERSION")},
        }),
        deadline,
    )?;
    session.notify("notifications/initialized")?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let result = session.request(2 + page as u64, "tools/list", params, deadline)?;
        match result.get("tools") {
            Some(Value::Array(list)) => tools.extend(list.iter().cloned()),
            _ => bail!("its tools/list answer has no tools list"),
        }
        cursor = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if cursor.is_none() {
            return Ok(tools);
        }
    }
    bail!("it returned more than {MAX_PAGES} pages of tools")
}

/// The JSON-RPC result of an answer, or its error (code and a bounded, cleaned message).
fn result_of(answer: &Value) -> anyhow::Result<Value> {
    if let Some(error) = answer.get("error") {
        let code = error["code"].as_i64().unwrap_or_default();
        let message: String = error["message"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(160)
            .collect();
        bail!("it answered error {code}: {message}");
    }
    answer
        .get("result")
        .cloned()
        .context("its answer has no result")
}

/// A server started as a child process.
struct Stdio_ {
    child: Child,
    lines: mpsc::Receiver<std::io::Result<String>>,
}

impl Stdio_ {
    fn start(
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
    ) -> anyhow::Result<Stdio_> {
        // The command as configured, so a wrong path can be fixed; one that looks like more
        // than a path (white space, `=`) is not repeated, as it may hold a secret.
        let program = if command.contains(|c: char| c.is_whitespace() || c == '=') {
            String::from("its configured command (not a plain program path)")
        } else {
            format!("`{command}`")
        };
        let mut child = Command::new(command)
            .args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                let read = (&mut reader).take(MAX_LINE as u64).read_line(&mut line);
                let done = matches!(read, Ok(0) | Err(_));
                if tx.send(read.map(|_| line)).is_err() || done {
                    return;
                }
            }
        });
        Ok(Stdio_ { child, lines })
    }

    fn stop(mut self) {
        // End of input first: a server that spawned its own child (npx, uvx) exits with it.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let stdin = self.child.stdin.as_mut().context("no stdin")?;
        writeln!(stdin, "{message}").context("it closed its input")?;
        stdin.flush().context("it closed its input")
    }
}

impl Exchange for Stdio_ {
    fn request(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
        deadline: &Deadline,
    ) -> anyhow::Result<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let line = match self.lines.recv_timeout(deadline.remaining()) {
                Ok(Ok(line)) if line.is_empty() => bail!("it exited before answering {method}"),
                Ok(Ok(line)) => line,
                Ok(Err(e)) => bail!("cannot read its answer to {method}: {e}"),
                Err(_) => bail!(
                    "no answer to {method} within {:.0} s",
                    deadline.budget().as_secs_f64()
                ),
            };
            // Servers may log on stdout or send notifications and requests of their own.
            let Ok(answer) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if answer.get("id").and_then(Value::as_u64) == Some(id)
                && answer.get("method").is_none()
            {
                return result_of(&answer);
            }
        }
    }

    fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
    }
}

/// A server reached over the streamable HTTP transport.
struct Http {
    url: String,
    headers: std::collections::BTreeMap<String, String>,
    session: Option<String>,
}

impl Http {
    fn post(&mut self, message: &Value, deadline: &Deadline) -> anyhow::Result<(String, String)> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(deadline.remaining()))
            .http_status_as_error(false)
            .build()
            .into();
        let mut request = agent
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", PROTOCOL);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(session) = &self.session {
            request = request.header("Mcp-Session-Id", session);
        }
        let started = Instant::now();
        let mut response = request.send(message.to_string()).map_err(|e| {
            anyhow::anyhow!(
                "cannot reach it: {}",
                e.to_string().lines().next().unwrap_or("")
            )
        })?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            bail!("it answered HTTP {status}");
        }
        if let Some(id) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(id.to_owned());
        }
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_LINE as u64)
            .read_to_string()
            .with_context(|| format!("cannot read its answer after {:?}", started.elapsed()))?;
        Ok((kind, body))
    }
}

impl Exchange for Http {
    fn request(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
        deadline: &Deadline,
    ) -> anyhow::Result<Value> {
        let (kind, body) = self.post(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            deadline,
        )?;
        let messages: Vec<Value> = if kind.starts_with("text/event-stream") {
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect()
        } else {
            vec![serde_json::from_str(&body).context("its answer is not JSON")?]
        };
        let answer = messages
            .into_iter()
            .find(|m| m.get("id").and_then(Value::as_u64) == Some(id))
            .with_context(|| format!("no answer to {method}"))?;
        result_of(&answer)
    }

    fn notify(&mut self, method: &str) -> anyhow::Result<()> {
        let deadline = Deadline::after(std::time::Duration::from_secs(5));
        self.post(&json!({"jsonrpc": "2.0", "method": method}), &deadline)
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::TcpListener;
    use std::time::Duration;

    use super::*;

    /// A streamable-HTTP MCP server in miniature: answers `initialize` as JSON with a session
    /// id, accepts the notification, and answers `tools/list` as an event stream, checking
    /// that the session id and the configured header come back.
    fn serve(listener: &TcpListener) {
        let mut handled = 0;
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut out = stream;
        while handled < 3 {
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).expect("read") == 0 {
                    // The client opened another connection.
                    let (stream, _) = listener.accept().expect("accept");
                    reader = BufReader::new(stream.try_clone().expect("clone"));
                    out = stream;
                    continue;
                }
                if line == "\r\n" {
                    break;
                }
                headers.push(line.to_ascii_lowercase());
            }
            let length: usize = headers
                .iter()
                .find_map(|h| h.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().expect("length"));
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let message: Value = serde_json::from_slice(&body).expect("json");
            assert!(
                headers
                    .iter()
                    .any(|h| h.starts_with("authorization: bearer t0ken"))
            );
            let (kind, extra, reply) = match message["method"].as_str() {
                Some("initialize") => (
                    "application/json",
                    "Mcp-Session-Id: s-42\r\n",
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": PROTOCOL}}).to_string(),
                ),
                Some("notifications/initialized") => ("application/json", "", String::new()),
                Some("tools/list") => {
                    assert!(headers.iter().any(|h| h.starts_with("mcp-session-id: s-42")));
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [{"name": "vm_power_off"}]}});
                    ("text/event-stream", "", format!("event: message\ndata: {answer}\n\n"))
                }
                other => panic!("unexpected {other:?}"),
            };
            handled += 1;
            let status = if reply.is_empty() {
                "202 Accepted"
            } else {
                "200 OK"
            };
            write!(
                out,
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n{extra}Content-Length: {}\r\n\r\n{reply}",
                reply.len()
            )
            .expect("write");
        }
    }

    #[test]
    fn lists_tools_over_streamable_http_with_its_session_and_headers() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let server = std::thread::spawn(move || serve(&listener));
        let transport = Transport::Http {
            url,
            headers: [(String::from("Authorization"), String::from("Bearer t0ken"))].into(),
        };
        let tools =
            list_tools(&transport, &Deadline::after(Duration::from_secs(20))).expect("tools");
        assert_eq!(tools, [json!({"name": "vm_power_off"})]);
        server.join().expect("server");
    }
}
