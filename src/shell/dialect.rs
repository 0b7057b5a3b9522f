//! Which language a command string is written in: a leaf, so that the shell catalog and the
//! tool catalog can name a dialect without depending on the analysis.

/// Which language the command string is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// bash / POSIX sh (Claude Code's `Bash`, Desktop Commander, most MCP command servers).
    Posix,
    /// PowerShell (Claude Code's `PowerShell`, PowerShell.MCP, `pwsh -c`).
    #[serde(rename = "powershell")]
    PowerShell,
}
