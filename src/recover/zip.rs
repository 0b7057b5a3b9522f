//! A download that is a zip archive: a ZVM may pack the requested file into one. The file is
//! taken out of it (deflated or stored, its CRC-32 checked); the archive itself is never the
//! restored file unless a `.zip` was asked for.

use std::io::{Read, Seek, SeekFrom, Write};

use anyhow::{Context as _, bail};

/// The first bytes of a zip archive (a local file header).
const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const END: u32 = 0x0605_4b50;

/// Whether a download should be unpacked: it starts like a zip and the guest file asked for
/// is not itself a zip.
pub(super) fn is_archive_of(head: &[u8], guest_path: &str) -> bool {
    head.len() >= 4
        && u32::from_le_bytes([head[0], head[1], head[2], head[3]]) == LOCAL
        && !guest_path.to_ascii_lowercase().ends_with(".zip")
}

/// One file of the archive.
struct Member {
    name: String,
    method: u16,
    crc: u32,
    packed: u64,
    size: u64,
    offset: u64,
}

/// Writes the member named like the guest file (its last component, any case), or the only
/// file of the archive, into `out`; returns its size.
pub(super) fn extract(
    archive: &mut (impl Read + Seek),
    file_name: &str,
    out: &mut impl Write,
) -> anyhow::Result<u64> {
    let members = directory(archive)?;
    let files: Vec<&Member> = members.iter().filter(|m| !m.name.ends_with('/')).collect();
    let base = |name: &str| name.rsplit(['/', '\\']).next().unwrap_or(name).to_owned();
    let wanted: Vec<&Member> = files
        .iter()
        .copied()
        .filter(|m| base(&m.name).eq_ignore_ascii_case(file_name))
        .collect();
    let member = match (wanted.as_slice(), files.as_slice()) {
        ([one], _) | ([], [one]) => *one,
        _ => bail!(
            "the ZVM answered with a zip archive of {} files, none of them alone named {file_name}: {}",
            files.len(),
            files
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    archive.seek(SeekFrom::Start(member.offset))?;
    let mut header = [0_u8; 30];
    archive
        .read_exact(&mut header)
        .context("the zip archive is cut short")?;
    if u32_at(&header, 0) != LOCAL {
        bail!("the zip archive's entry for {} is damaged", member.name);
    }
    let skip = u64::from(u16_at(&header, 26)) + u64::from(u16_at(&header, 28));
    archive.seek(SeekFrom::Current(i64::try_from(skip)?))?;
    let packed = archive.take(member.packed);
    let mut checked = Checked {
        out,
        crc: flate2::Crc::new(),
    };
    let written = match member.method {
        0 => std::io::copy(&mut { packed }, &mut checked)?,
        8 => std::io::copy(&mut flate2::read::DeflateDecoder::new(packed), &mut checked)?,
        other => bail!(
            "the zip archive packs {} with method {other}; only stored and deflated files are read",
            member.name
        ),
    };
    if written != member.size || checked.crc.sum() != member.crc {
        bail!(
            "{} in the zip archive is damaged (size or CRC-32 does not match)",
            member.name
        );
    }
    Ok(written)
}

/// The archive's central directory.
fn directory(archive: &mut (impl Read + Seek)) -> anyhow::Result<Vec<Member>> {
    let len = archive.seek(SeekFrom::End(0))?;
    // The end record is 22 bytes, followed by a comment of at most 64 KiB.
    let tail_len = len.min(22 + 65_535);
    archive.seek(SeekFrom::Start(len - tail_len))?;
    let mut tail = vec![0_u8; usize::try_from(tail_len)?];
    archive.read_exact(&mut tail)?;
    let end = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| u32_at(&tail, i) == END)
        .context("the download starts like a zip archive but has no central directory")?;
    let count = u16_at(&tail, end + 10);
    let size = u32_at(&tail, end + 12);
    let start = u32_at(&tail, end + 16);
    archive.seek(SeekFrom::Start(u64::from(start)))?;
    let mut dir = vec![0_u8; usize::try_from(size)?];
    archive
        .read_exact(&mut dir)
        .context("the zip archive's directory is cut short")?;
    let mut members = Vec::new();
    let mut at = 0;
    for _ in 0..count {
        if dir.len() < at + 46 || u32_at(&dir, at) != CENTRAL {
            bail!("the zip archive's directory is damaged");
        }
        let name_len = usize::from(u16_at(&dir, at + 28));
        let extra = usize::from(u16_at(&dir, at + 30)) + usize::from(u16_at(&dir, at + 32));
        let name = dir
            .get(at + 46..at + 46 + name_len)
            .context("the zip archive's directory is damaged")?;
        members.push(Member {
            name: String::from_utf8_lossy(name).into_owned(),
            method: u16_at(&dir, at + 10),
            crc: u32_at(&dir, at + 16),
            packed: u64::from(u32_at(&dir, at + 20)),
            size: u64::from(u32_at(&dir, at + 24)),
            offset: u64::from(u32_at(&dir, at + 42)),
        });
        at += 46 + name_len + extra;
    }
    Ok(members)
}

fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// A writer that keeps the CRC-32 of what passes.
struct Checked<'a, W> {
    out: &'a mut W,
    crc: flate2::Crc,
}

impl<W: Write> Write for Checked<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    #[test]
    fn the_file_comes_out_of_the_archive_byte_identical() {
        let bytes = b"listen = 0.0.0.0:8080\nmode = safe\n".repeat(50);
        let archive = crate::sim::zip_of("app.conf", &bytes);
        assert!(is_archive_of(&archive, "/etc/app.conf"));
        assert!(
            !is_archive_of(&archive, "/tmp/backup.ZIP"),
            "a zip asked for stays a zip"
        );
        assert!(!is_archive_of(&bytes, "/etc/app.conf"));
        let mut out = Vec::new();
        let size = extract(&mut Cursor::new(&archive), "app.conf", &mut out).expect("extracts");
        assert_eq!(out, bytes);
        assert_eq!(size, bytes.len() as u64);
    }

    #[test]
    fn a_damaged_archive_is_refused_not_written() {
        let mut archive = crate::sim::zip_of("app.conf", b"mode = safe\n");
        let flip = 40;
        archive[flip] ^= 0xff;
        let mut out = Vec::new();
        assert!(extract(&mut Cursor::new(&archive), "app.conf", &mut out).is_err());
        let err = extract(&mut Cursor::new(&archive[..20]), "app.conf", &mut out).unwrap_err();
        assert!(err.to_string().contains("zip"), "{err}");
    }
}
