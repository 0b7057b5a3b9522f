//! What the classifier reads on this machine, and the sessions the hook remembers: the
//! classifier itself does no I/O ([`crate::classify`]).

use std::path::Path;
use std::time::{Instant, SystemTime};

use crate::catalog::{Catalog, ToolName};
use crate::classify::{Lookup, Remember};
use crate::config::{self, Config};
use crate::sessions::{Recalled, Sessions};
use crate::shell;

/// This machine's catalogs, remembered sessions and shell analysis, read as they are at
/// `now`. Reading only: `rewind check` hands it to the classifier as the hook does.
pub(crate) struct LocalFiles<'a> {
    config: &'a Config,
    /// Without a state directory nothing was remembered: a call naming a session then asks.
    sessions: Option<Sessions>,
    now: SystemTime,
}

impl<'a> LocalFiles<'a> {
    pub(crate) fn new(config: &'a Config) -> LocalFiles<'a> {
        LocalFiles {
            config,
            sessions: config::state_dir().ok().map(|dir| Sessions::in_dir(&dir)),
            now: SystemTime::now(),
        }
    }
}

impl Lookup for LocalFiles<'_> {
    fn protected(&self) -> crate::selfguard::Protected {
        crate::selfguard::Protected::new(self.config)
    }

    fn catalog(&self, name: &ToolName) -> anyhow::Result<Catalog> {
        Catalog::load_for(
            name,
            self.config.hook.builtin_catalogs,
            &self.config.hook.catalogs,
        )
    }

    fn recall(&self, host_session: &str, server: &str, session: &str) -> Recalled {
        self.sessions
            .as_ref()
            .map_or(Recalled::Nothing, |sessions| {
                sessions.recalled(host_session, server, session, self.now)
            })
    }

    fn judge(
        &self,
        command: &str,
        dialect: shell::Dialect,
        cwd: Option<&Path>,
        typed: bool,
        until: Instant,
    ) -> anyhow::Result<shell::Judgement> {
        shell::judge(command, dialect, self.config, cwd, typed, until)
    }
}

/// Writes down a session a call opens, in the user's state directory.
pub(crate) fn remember(session: &Remember) -> anyhow::Result<()> {
    Sessions::in_dir(&config::state_dir()?).remember(
        &session.host_session,
        &session.server,
        &session.session,
        session.vm.as_deref(),
        SystemTime::now(),
    )
}
