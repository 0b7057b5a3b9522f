//! Windows shells: `pwsh`/`powershell` (`-Command`, `-EncodedCommand`, `-File`),
//! `Invoke-Expression` and `cmd /c`.

use base64::Engine as _;

use super::{Next, join};
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Stdin};

/// `pwsh -c TEXT`, `powershell -Command …`, `-EncodedCommand BASE64`.
pub(super) fn powershell(args: &[Arg], stdin: &Stdin) -> Next {
    // `-Command -`, a lone `-`, `-File /dev/stdin`: the commands are the input.
    let from_input = || match stdin {
        Stdin::Text(body) => Next::Text(body.clone(), Dialect::PowerShell),
        Stdin::Pipe => Next::Piped(String::from(
            "PowerShell runs the commands it reads from its input, which are not seen",
        )),
        _ => Next::Nothing,
    };
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text().to_ascii_lowercase();
        let flag = text.trim_start_matches(['-', '/']);
        if text == "-" {
            return from_input();
        }
        if !text.starts_with(['-', '/']) {
            // The first operand: a script file, or (Windows PowerShell) the command itself.
            return Next::Text(join(&args[i..]), Dialect::PowerShell);
        }
        if flag == "c" || (flag.len() >= 2 && "command".starts_with(flag)) {
            if args.get(i + 1).map(Arg::text) == Some("-") {
                return from_input();
            }
            return if i + 1 < args.len() {
                Next::Text(join(&args[i + 1..]), Dialect::PowerShell)
            } else {
                Next::Nothing
            };
        }
        if matches!(flag, "e" | "ec" | "en" | "enc")
            || (flag.len() >= 3 && "encodedcommand".starts_with(flag))
        {
            return match args
                .get(i + 1)
                .and_then(|a| a.value.as_deref())
                .and_then(decode_utf16)
            {
                Some(text) => Next::Text(Arg::literal(text), Dialect::PowerShell),
                None => Next::Opaque(String::from(
                    "`-EncodedCommand` holds text that could not be decoded",
                )),
            };
        }
        if flag == "f" || (flag.len() >= 2 && "file".starts_with(flag)) {
            if matches!(args.get(i + 1).map(Arg::text), Some("/dev/stdin" | "-")) {
                return from_input();
            }
            return Next::Nothing;
        }
        let takes_value = matches!(
            flag,
            "executionpolicy"
                | "ep"
                | "ex"
                | "workingdirectory"
                | "wd"
                | "outputformat"
                | "of"
                | "inputformat"
                | "if"
                | "configurationname"
                | "settingsfile"
                | "version"
                | "v"
                | "windowstyle"
                | "w"
                | "psconsolefile"
        );
        i += if takes_value { 2 } else { 1 };
    }
    Next::Nothing
}

fn decode_utf16(b64: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).ok()
}

/// `Invoke-Expression TEXT` (`iex`): the text, or the pipeline it reads.
pub(super) fn invoke_expression(name: &str, args: &[Arg], stdin: &Stdin) -> Next {
    let words: Vec<Arg> = args[1..]
        .iter()
        .filter(|a| !a.text().starts_with('-'))
        .cloned()
        .collect();
    let joined = join(&words);
    if words.is_empty() && *stdin == Stdin::Pipe {
        Next::Piped(format!("`{name}` runs the text it reads from the pipeline"))
    } else if joined.value.is_some() {
        Next::Text(joined, Dialect::PowerShell)
    } else {
        Next::Opaque(format!(
            "`{name}` runs text that is only known when the command runs"
        ))
    }
}

/// `cmd /c TEXT`, `cmd /k TEXT`.
pub(super) fn cmd(args: &[Arg]) -> Next {
    let c = args
        .iter()
        .position(|a| a.text().eq_ignore_ascii_case("/c") || a.text().eq_ignore_ascii_case("/k"));
    match c {
        Some(c) if c + 1 < args.len() => Next::Text(join(&args[c + 1..]), Dialect::PowerShell),
        _ => Next::Nothing,
    }
}
