//! The built-in ZVM simulator: a faithful imitation of the ZVM 10.x REST API over HTTPS.
//! (Being built: see the simulator issue.)

use crate::cli::SimArgs;

/// `rewind sim`: serve a scenario until interrupted.
pub fn serve(_args: &SimArgs) -> anyhow::Result<()> {
    anyhow::bail!("the simulator is not built yet")
}
