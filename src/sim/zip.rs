//! A zip archive of one file, deflated, as a ZVM may serve an FLR download (`download-zip`).

use std::io::{Cursor, Write as _};

use zip::{CompressionMethod, ZipWriter, write::SimpleFileOptions};

/// An archive holding `bytes` as `name`.
pub(crate) fn archive(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    // Writing to memory cannot fail: an error here would be the crate's, and the simulator
    // then serves an empty (damaged) archive, which recover refuses.
    let written = writer
        .start_file(name, options)
        .and_then(|()| writer.write_all(bytes).map_err(Into::into))
        .and_then(|()| writer.finish());
    written.map(Cursor::into_inner).unwrap_or_default()
}
