//! HTTP/1.1 requests and responses, as small as the simulator needs: headers parsed by
//! `httparse`, `Content-Length` bodies only (chunked uploads are refused with 411), a body cap,
//! keep-alive unless the client says `Connection: close`.

use serde_json::Value;

/// Largest request head accepted.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
pub(crate) const MAX_BODY: usize = 1024 * 1024;
const MAX_HEADERS: usize = 64;

/// One parsed request. Header names and query keys are lower-cased; the path is
/// percent-decoded, without its query.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

/// The head of a request, before its body has been read.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) request: Request,
    /// Bytes the head occupies in the buffer.
    pub(crate) len: usize,
    pub(crate) content_length: usize,
    pub(crate) keep_alive: bool,
    pub(crate) expect_continue: bool,
}

/// One response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// A header's value (name in any case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// A query parameter's value (key in any case).
    pub(crate) fn query(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, or a 400 answer saying why not.
    pub(crate) fn json(&self) -> Result<Value, Response> {
        serde_json::from_slice(&self.body).map_err(|err| {
            Response::message(400, &format!("The request body is not valid JSON: {err}"))
        })
    }

    /// The body as `application/x-www-form-urlencoded` pairs.
    pub(crate) fn form(&self) -> Vec<(String, String)> {
        parse_pairs(&String::from_utf8_lossy(&self.body))
    }

    /// The bearer token of an `Authorization: Bearer` header.
    pub(crate) fn bearer(&self) -> Option<&str> {
        let value = self.header("authorization")?.trim();
        let (scheme, token) = value.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    }

    /// User and password of an `Authorization: Basic` header.
    pub(crate) fn basic(&self) -> Option<(String, String)> {
        let value = self.header("authorization")?.trim();
        let (scheme, encoded) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = String::from_utf8(base64_decode(encoded.trim())?).ok()?;
        let (user, password) = decoded.split_once(':')?;
        Some((user.to_owned(), password.to_owned()))
    }
}

impl Response {
    /// A JSON body.
    pub(crate) fn json(status: u16, body: &Value) -> Response {
        Response {
            status,
            headers: vec![(
                "Content-Type".into(),
                "application/json; charset=utf-8".into(),
            )],
            body: body.to_string().into_bytes(),
        }
    }

    /// A ZVM error: `{"Message": "..."}`.
    pub(crate) fn message(status: u16, message: &str) -> Response {
        Response::json(status, &serde_json::json!({ "Message": message }))
    }

    /// No body.
    pub(crate) fn empty(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// Raw bytes.
    pub(crate) fn bytes(content_type: &str, body: Vec<u8>) -> Response {
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body,
        }
    }

    #[must_use]
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The response on the wire.
    pub(crate) fn to_bytes(&self, keep_alive: bool) -> Vec<u8> {
        let mut head = vec![format!("HTTP/1.1 {} {}", self.status, reason(self.status))];
        head.push("Server: rewind-sim".to_owned());
        head.extend(
            self.headers
                .iter()
                .map(|(name, value)| format!("{name}: {value}")),
        );
        head.push(format!("Content-Length: {}", self.body.len()));
        if !keep_alive {
            head.push("Connection: close".to_owned());
        }
        let mut bytes = (head.join("\r\n") + "\r\n\r\n").into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// Parses a request head from the start of `buf`: `Ok(None)` while incomplete, `Err` with the
/// answer to send (then close) when the request is unacceptable.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<Head>, Response> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Request::new(&mut headers);
    let len = match parsed.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(Response::message(431, "Request header fields too large"));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(Response::message(431, "Too many header fields"));
        }
        Err(err) => {
            return Err(Response::message(
                400,
                &format!("Malformed HTTP request: {err}"),
            ));
        }
    };
    let method = parsed.method.unwrap_or_default().to_owned();
    let target = parsed.path.unwrap_or_default();
    let http10 = parsed.version == Some(0);
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).trim().to_owned(),
            )
        })
        .collect();
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    if find("transfer-encoding").is_some() {
        return Err(Response::message(
            411,
            "Chunked request bodies are not supported; send Content-Length",
        ));
    }
    let content_length = match find("content-length") {
        None => 0,
        Some(value) => value
            .parse::<usize>()
            .map_err(|_| Response::message(400, &format!("Invalid Content-Length {value:?}")))?,
    };
    if content_length > MAX_BODY {
        return Err(Response::message(
            413,
            &format!("Request bodies are limited to {MAX_BODY} bytes"),
        ));
    }
    let connection = find("connection").unwrap_or_default();
    let keep_alive = if http10 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    };
    let expect_continue = find("expect").is_some_and(|v| v.contains("100-continue"));
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let request = Request {
        method,
        path: percent_decode(raw_path, false),
        query: parse_pairs(raw_query)
            .into_iter()
            .map(|(k, v)| (k.to_lowercase(), v))
            .collect(),
        headers,
        body: Vec::new(),
    };
    Ok(Some(Head {
        request,
        len,
        content_length,
        keep_alive,
        expect_continue,
    }))
}

/// `a=1&b=two` with percent-decoding and `+` as space.
pub(crate) fn parse_pairs(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key, true), percent_decode(value, true))
        })
        .collect()
}

/// Decodes `%XX` escapes (and `+` as a space when `plus_is_space`); invalid escapes stay as they are.
pub(crate) fn percent_decode(text: &str, plus_is_space: bool) -> String {
    let text = if plus_is_space {
        std::borrow::Cow::Owned(text.replace('+', " "))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    percent_encoding::percent_decode_str(&text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Base64 (standard, padded) or base64url (unpadded, `url_safe`).
pub(crate) fn base64_encode(bytes: &[u8], url_safe: bool) -> String {
    use base64::Engine as _;
    if url_safe {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    } else {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }
}

/// Decodes base64 or base64url, padded or not; `None` when it is not base64.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    let lenient =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, lenient);
    let url_safe = GeneralPurpose::new(&base64::alphabet::URL_SAFE, lenient);
    standard
        .decode(text)
        .or_else(|_| url_safe.decode(text))
        .ok()
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_head_with_query_and_keep_alive() {
        let raw = b"GET /v1/vms?VmName=jp%2Dubuntu&x=a+b HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer abc\r\n\r\nrest";
        let head = parse_head(raw).expect("valid").expect("complete");
        assert_eq!(head.len, raw.len() - 4);
        assert_eq!(head.request.path, "/v1/vms");
        assert_eq!(head.request.query("vmname"), Some("jp-ubuntu"));
        assert_eq!(head.request.query("X"), Some("a b"));
        assert_eq!(head.request.bearer(), Some("abc"));
        assert!(head.keep_alive);
        assert!(
            parse_head(b"GET / HTTP/1.1\r\nHost")
                .expect("valid")
                .is_none(),
            "incomplete"
        );
    }

    #[test]
    fn refuses_what_it_does_not_support() {
        let chunked =
            parse_head(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap_err();
        assert_eq!(chunked.status, 411);
        let huge = parse_head(b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n").unwrap_err();
        assert_eq!(huge.status, 413);
        assert_eq!(
            parse_head(b"\x01\x02 nonsense\r\n\r\n").unwrap_err().status,
            400
        );
        let close = parse_head(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .expect("valid")
            .expect("complete");
        assert!(!close.keep_alive);
        let old = parse_head(b"GET / HTTP/1.0\r\n\r\n")
            .expect("valid")
            .expect("complete");
        assert!(!old.keep_alive);
    }

    #[test]
    fn base64_round_trips_and_reads_basic_auth() {
        for text in ["", "a", "ab", "abc", "admin:zerto-sim"] {
            assert_eq!(
                base64_decode(&base64_encode(text.as_bytes(), false)).as_deref(),
                Some(text.as_bytes())
            );
            assert_eq!(
                base64_decode(&base64_encode(text.as_bytes(), true)).as_deref(),
                Some(text.as_bytes())
            );
        }
        assert_eq!(
            base64_encode(b"admin:zerto-sim", false),
            "YWRtaW46emVydG8tc2lt"
        );
        let head = parse_head(
            b"POST /v1/session/add HTTP/1.1\r\nAuthorization: basic YWRtaW46emVydG8tc2lt\r\n\r\n",
        )
        .expect("valid")
        .expect("complete");
        assert_eq!(
            head.request.basic(),
            Some(("admin".into(), "zerto-sim".into()))
        );
    }

    #[test]
    fn percent_decoding_keeps_invalid_escapes() {
        assert_eq!(percent_decode("a%20b%zz%", false), "a b%zz%");
        assert_eq!(percent_decode("a+b", false), "a+b");
    }

    #[test]
    fn responses_carry_length_and_close() {
        let bytes = Response::message(404, "nope").to_bytes(false);
        let text = String::from_utf8(bytes).expect("utf-8");
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        assert!(
            text.contains("Content-Length: 18\r\nConnection: close\r\n\r\n{\"Message\":\"nope\"}"),
            "{text}"
        );
    }
}
