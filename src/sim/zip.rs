//! A zip archive of one file, deflated, as a ZVM may serve an FLR download (`download-zip`).

use std::io::Write as _;

/// An archive holding `bytes` as `name`.
pub(crate) fn archive(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    let data = encoder.finish().unwrap_or_default();
    let size = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let name_len = u16::try_from(name.len()).unwrap_or(u16::MAX);
    let name = &name.as_bytes()[..usize::from(name_len)];
    let mut out = Vec::new();
    // Local file header.
    out.extend_from_slice(&0x0403_4b50_u32.to_le_bytes());
    out.extend_from_slice(&20_u16.to_le_bytes()); // version needed
    out.extend_from_slice(&0_u16.to_le_bytes()); // flags
    out.extend_from_slice(&8_u16.to_le_bytes()); // deflate
    out.extend_from_slice(&[0; 4]); // time, date
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&size(data.len()).to_le_bytes());
    out.extend_from_slice(&size(bytes.len()).to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&0_u16.to_le_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&data);
    let directory = out.len();
    // Central directory entry.
    out.extend_from_slice(&0x0201_4b50_u32.to_le_bytes());
    out.extend_from_slice(&20_u16.to_le_bytes()); // made by
    out.extend_from_slice(&20_u16.to_le_bytes()); // needed
    out.extend_from_slice(&0_u16.to_le_bytes());
    out.extend_from_slice(&8_u16.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&size(data.len()).to_le_bytes());
    out.extend_from_slice(&size(bytes.len()).to_le_bytes());
    out.extend_from_slice(&name_len.to_le_bytes());
    out.extend_from_slice(&[0; 12]); // extra, comment, disk, internal and external attributes
    out.extend_from_slice(&0_u32.to_le_bytes()); // offset of the local header
    out.extend_from_slice(name);
    let directory_len = out.len() - directory;
    // End of central directory.
    out.extend_from_slice(&0x0605_4b50_u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&1_u16.to_le_bytes());
    out.extend_from_slice(&1_u16.to_le_bytes());
    out.extend_from_slice(&size(directory_len).to_le_bytes());
    out.extend_from_slice(&size(directory).to_le_bytes());
    out.extend_from_slice(&0_u16.to_le_bytes());
    out
}
