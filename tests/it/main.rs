//! The single integration test binary: one module per area.

mod claude;
