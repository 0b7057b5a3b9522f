//! A download that is a zip archive: a ZVM may pack the requested file into one. The file is
//! taken out of it (deflated or stored, its size and CRC-32 checked by the `zip` crate and its
//! size again here); the archive itself is never the restored file unless a `.zip` was asked
//! for. A member's name only chooses the member: what is written goes to the caller's file,
//! never to a path the archive names.

use std::io::{Read, Seek, Write};

use anyhow::{Context as _, bail};
use zip::{CompressionMethod, ZipArchive};

/// The first bytes of a zip archive (a local file header).
const LOCAL: [u8; 4] = 0x0403_4b50_u32.to_le_bytes();

/// Whether a download should be unpacked: it starts like a zip and the guest file asked for
/// is not itself a zip.
pub(super) fn is_archive_of(head: &[u8], guest_path: &str) -> bool {
    head.starts_with(&LOCAL) && !guest_path.to_ascii_lowercase().ends_with(".zip")
}

/// Writes the member named like the guest file (its last component, any case), or the only
/// file of the archive, into `out`; returns its size.
pub(super) fn extract(
    archive: &mut (impl Read + Seek),
    file_name: &str,
    out: &mut impl Write,
) -> anyhow::Result<u64> {
    let mut archive = ZipArchive::new(archive)
        .context("the download starts like a zip archive but its directory cannot be read")?;
    let mut files = Vec::new();
    for index in 0..archive.len() {
        let entry = archive
            .by_index_raw(index)
            .context("the zip archive's directory is damaged")?;
        if !entry.is_dir() {
            files.push((
                index,
                String::from_utf8_lossy(entry.name_raw()).into_owned(),
            ));
        }
    }
    let base = |name: &str| name.rsplit(['/', '\\']).next().unwrap_or(name).to_owned();
    let wanted: Vec<(usize, String)> = files
        .iter()
        .filter(|(_, name)| base(name).eq_ignore_ascii_case(file_name))
        .cloned()
        .collect();
    let (index, name) = match (wanted.as_slice(), files.as_slice()) {
        ([one], _) | ([], [one]) => one.clone(),
        _ => bail!(
            "the ZVM answered with a zip archive of {} files, none of them alone named {file_name}: {}",
            files.len(),
            files
                .iter()
                .map(|(_, name)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut member = archive
        .by_index(index)
        .with_context(|| format!("the zip archive's entry for {name} is damaged"))?;
    match member.compression() {
        CompressionMethod::Stored | CompressionMethod::Deflated => {}
        other => bail!(
            "the zip archive packs {name} with method {other}; only stored and deflated files are read"
        ),
    }
    let size = member.size();
    let damaged =
        || format!("{name} in the zip archive is damaged (size or CRC-32 does not match)");
    let mut buf = vec![0_u8; 64 * 1024];
    let mut written = 0_u64;
    loop {
        // A read error is the archive's (the crate checks the CRC-32 and the declared size as
        // it inflates); a write error is the destination's.
        let n = member.read(&mut buf).with_context(damaged)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
        written += n as u64;
    }
    if written != size {
        bail!(damaged());
    }
    Ok(written)
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

    fn archive_of(members: &[(&str, CompressionMethod, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, method, bytes) in members {
            let options = zip::write::SimpleFileOptions::default().compression_method(*method);
            writer.start_file(*name, options).expect("starts");
            writer.write_all(bytes).expect("writes");
        }
        writer.finish().expect("finishes").into_inner()
    }

    #[test]
    fn the_member_named_like_the_guest_file_is_chosen_and_its_own_path_is_never_used() {
        let archive = archive_of(&[
            (
                "../../etc/APP.CONF",
                CompressionMethod::Stored,
                b"mode = safe\n",
            ),
            ("notes.txt", CompressionMethod::Deflated, b"other\n"),
        ]);
        let mut out = Vec::new();
        let size = extract(&mut Cursor::new(&archive), "app.conf", &mut out).expect("extracts");
        assert_eq!((size, out.as_slice()), (12, b"mode = safe\n".as_slice()));
        let err = extract(&mut Cursor::new(&archive), "other.conf", &mut Vec::new()).unwrap_err();
        assert!(
            err.to_string().contains(
                "of 2 files, none of them alone named other.conf: ../../etc/APP.CONF, notes.txt"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_member_longer_than_its_declared_size_is_refused() {
        let mut archive = archive_of(&[("app.conf", CompressionMethod::Stored, b"mode = safe\n")]);
        // The central directory's uncompressed size (offset 24 of its entry) says 4 bytes.
        let central = archive
            .windows(4)
            .position(|w| w == 0x0201_4b50_u32.to_le_bytes())
            .expect("a central directory");
        archive[central + 24..central + 28].copy_from_slice(&4_u32.to_le_bytes());
        let err = extract(&mut Cursor::new(&archive), "app.conf", &mut Vec::new()).unwrap_err();
        assert!(format!("{err:#}").contains("damaged"), "{err:#}");
    }
}
