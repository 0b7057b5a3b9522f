//! The guard of `rewind-hook`, run by `rewind` beside it ([`super::Direct::BESIDE`]).
//!
//! `rewind-hook` starts on every tool call and most calls need no ZVM; linking the ZVM client
//! (HTTP, TLS, certificates) would make every one of those starts pay for the few that do. So
//! when a call needs checkpoints and no broker is configured, the hook starts
//! `rewind [--config FILE] hook-guard [--managed]` with one end of a socket pair as its stdin
//! and stdout and speaks the broker's line protocol to it ([`crate::broker::protocol`]): one
//! guard request, the guard's steps as progress lines, the outcome. `rewind` loads the same
//! configuration file the hook read, guards in its own process exactly as `rewind hook` would,
//! and records nothing: the hook keeps the decision, the watchdog and the audit record.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::protect::{Change, Protection, policy};
use super::{Relay, Watch};
use crate::broker::protocol::{self, Answer, GuardResult, Op};
use crate::config::Config;
use crate::deadline::Deadline;
use crate::decision::{self, Case};
use crate::zvm::ZvmError;

/// The subcommand of `rewind` that serves one guard request on its stdin.
pub(crate) const SUBCOMMAND: &str = "hook-guard";

/// How long past the guard's deadline its answer is still waited for: a guard in this process
/// may answer that late too (the hook's watchdog allows its worker half a second).
const ANSWER_GRACE: Duration = Duration::from_millis(400);

/// How long `rewind hook-guard` waits for the request line once started.
const REQUEST_WAIT: Duration = Duration::from_secs(5);

/// The guard asked of `rewind` beside this binary; the signature of
/// [`super::Direct`]. Whatever goes wrong with `rewind` itself (missing, killed, an answer
/// that is not the protocol) is decided like a ZVM that cannot be set up: a deny, or an ask
/// under `on_zvm_error = "ask"`, naming the binary.
pub(super) fn through(
    config: &Config,
    references: &[&str],
    change: &Change,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Protection {
    let asked = beside().and_then(|rewind| {
        ask(config, &rewind, references, change, deadline, watch)
            .map_err(|why| format!("the guard in {} {why}", rewind.display()))
    });
    asked.unwrap_or_else(|why| {
        let error = ZvmError::Setup(why);
        let decision = decision::decide(
            &change.step(),
            &change.id,
            &Case::ZvmError {
                vms: &references.join(","),
                error: &error,
            },
            &policy(config),
        );
        Protection::unguarded(references, decision)
    })
}

/// `rewind`, in the directory of the running binary.
fn beside() -> Result<PathBuf, String> {
    std::env::current_exe()
        .map(|exe| exe.with_file_name(crate::platform::executable("rewind")))
        .map_err(|e| format!("cannot find the running binary, so not `rewind` beside it ({e})"))
}

/// Starts `rewind hook-guard`, sends the request, relays its steps to `watch`, reads the
/// outcome.
fn ask(
    config: &Config,
    rewind: &Path,
    references: &[&str],
    change: &Change,
    deadline: &Deadline,
    watch: &dyn Watch,
) -> Result<Protection, String> {
    let (ours, input, output) =
        crate::platform::helper_pair().map_err(|e| format!("cannot start ({e})"))?;
    let mut command = Command::new(rewind);
    if let Some(origin) = &config.origin {
        command.arg("--config").arg(origin);
    }
    command.arg(SUBCOMMAND);
    if config.managed {
        command.arg("--managed");
    }
    // Its stderr is not the host's: a `rewind` still finishing after the hook has answered
    // must not hold the host's pipe open.
    let child = command
        .stdin(input)
        .stdout(output)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start ({e}); rewind-hook needs rewind beside it"))?;
    // Ours alone now: the answer ends when `rewind` exits or closes it.
    drop(command);
    let request = change.request(config, references);
    let answer = crate::broker::client::exchange(
        &ours,
        Op::Guard(request),
        deadline,
        ANSWER_GRACE,
        &mut |text| watch.step(text),
        &|| watch.cancelled(),
    );
    // Not waited for: it exits once it has answered, and a hung one must not hold the hook.
    drop(child);
    let result = answer?;
    serde_json::from_value::<GuardResult>(result)
        .map_err(|e| e.to_string())
        .and_then(|result| Protection::from_wire(result, false))
        .map_err(|e| format!("answered outside its protocol ({e})"))
}

/// `rewind hook-guard`: serves one guard request on stdin (a socket), answering on the same
/// socket, with the configuration `config_path` names (a managed entry's when `managed`).
pub(crate) fn serve(config_path: Option<&Path>, managed: bool) -> anyhow::Result<()> {
    let stream = crate::platform::helper_stream()
        .map_err(|e| anyhow::anyhow!("{SUBCOMMAND}: cannot take stdin ({e})"))?;
    let Some(request) = protocol::read_request(
        &stream,
        REQUEST_WAIT,
        &protocol::ReadBudget::new(protocol::REQUEST_MAX),
    ) else {
        anyhow::bail!("{SUBCOMMAND}: no request on stdin");
    };
    let answered = request.and_then(|request| {
        let Op::Guard(guard) = request.op else {
            return Err(format!(
                "{SUBCOMMAND} serves guard requests, not {}",
                request.op.name()
            ));
        };
        let deadline = Deadline::after(Duration::from_millis(request.deadline_ms));
        let loaded = if managed {
            Config::load_managed(config_path)
        } else {
            Config::discover_for_hook(config_path)
        };
        let config = loaded.map_err(|e| format!("{e:#}"))?;
        let user = crate::platform::current_user_name().unwrap_or_else(|| String::from("unknown"));
        let relay = |text: &str| {
            // Nobody listening any more (the hook answered): the guard goes on to its end.
            let _ = protocol::write_answer(
                &stream,
                &Answer::Progress {
                    text: text.to_owned(),
                },
            );
        };
        let protected = super::for_request(&config, &guard, &user, &deadline, &Relay(&relay))?;
        let result = protected.to_wire().ok_or_else(|| {
            format!(
                "internal error: the guard decided {}",
                protected.decision.label()
            )
        })?;
        serde_json::to_value(&result).map_err(|e| e.to_string())
    });
    let answer = match answered {
        Ok(result) => Answer::Done { result },
        Err(error) => Answer::Refused { error },
    };
    protocol::write_answer(&stream, &answer)
        .map_err(|e| anyhow::anyhow!("{SUBCOMMAND}: cannot answer ({e})"))
}
