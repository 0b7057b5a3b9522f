//! Authentication as a ZVM does it: Keycloak OpenID Connect tokens (10.x) or
//! `x-zerto-session` sessions (Windows 9.x).
//!
//! Access tokens are JWT-shaped and live `token_lifetime_secs` REAL seconds (Keycloak does not
//! know about the time scale); refresh tokens 30 minutes; sessions die after 30 minutes idle.
//! Every token carries a per-simulator random part, so a token cached from an earlier
//! simulator on the same port is refused like a token from another appliance.

use std::collections::HashMap;
use std::hash::{BuildHasher as _, Hasher as _};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::http::base64_encode;
use super::scenario::{AuthMode, Scenario};

const REFRESH_LIFETIME: Duration = Duration::from_secs(1800);
const SESSION_IDLE: Duration = Duration::from_secs(1800);

/// Issued credentials.
#[derive(Debug)]
pub(crate) struct Auth {
    nonce: String,
    counter: u64,
    access: HashMap<String, Instant>,
    refresh: HashMap<String, (Instant, String)>,
    sessions: HashMap<String, Instant>,
}

/// The body of a token answer, with its HTTP status.
pub(crate) type TokenAnswer = (u16, Value);

impl Auth {
    pub(crate) fn new() -> Auth {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        Auth {
            nonce: format!("{:016x}", hasher.finish()),
            counter: 0,
            access: HashMap::new(),
            refresh: HashMap::new(),
            sessions: HashMap::new(),
        }
    }

    fn next(&mut self, kind: &str) -> String {
        self.counter += 1;
        format!("{kind}{}{}", self.counter, self.nonce)
    }

    /// `POST /auth/realms/zerto/protocol/openid-connect/token` with the form's fields
    /// (`field(name)` looks one up) and optional Basic client credentials.
    pub(crate) fn token(
        &mut self,
        scenario: &Scenario,
        field: impl Fn(&str) -> Option<String>,
        basic: Option<(String, String)>,
        issuer: &str,
        now: Instant,
    ) -> TokenAnswer {
        let (basic_id, basic_secret) =
            basic.map_or((None, None), |(id, secret)| (Some(id), Some(secret)));
        let client_id = field("client_id").or(basic_id).unwrap_or_default();
        let client_secret = field("client_secret").or(basic_secret);
        match field("grant_type").as_deref() {
            Some("password") => {
                if client_id != "zerto-client" && client_id != scenario.client_id {
                    return oauth_error(
                        401,
                        "invalid_client",
                        "Invalid client or Invalid client credentials",
                    );
                }
                let user_ok =
                    field("username").is_some_and(|u| u.eq_ignore_ascii_case(&scenario.username));
                if !user_ok || field("password").as_deref() != Some(scenario.password.as_str()) {
                    return oauth_error(401, "invalid_grant", "Invalid user credentials");
                }
                (200, self.issue(scenario, &client_id, true, issuer, now))
            }
            Some("client_credentials") => {
                let valid = client_id == scenario.client_id
                    && scenario.client_secret.is_some()
                    && client_secret == scenario.client_secret;
                if !valid {
                    return oauth_error(
                        401,
                        "unauthorized_client",
                        "Invalid client or Invalid client credentials",
                    );
                }
                (200, self.issue(scenario, &client_id, false, issuer, now))
            }
            Some("refresh_token") => {
                let token = field("refresh_token").unwrap_or_default();
                match self.refresh.get(&token) {
                    Some((expiry, owner)) if *expiry > now => {
                        let owner = owner.clone();
                        self.refresh.remove(&token);
                        (200, self.issue(scenario, &owner, true, issuer, now))
                    }
                    _ => oauth_error(400, "invalid_grant", "Token is not active"),
                }
            }
            Some(other) => oauth_error(
                400,
                "unsupported_grant_type",
                &format!("Unsupported grant_type {other:?}"),
            ),
            None => oauth_error(400, "invalid_request", "Missing form parameter: grant_type"),
        }
    }

    fn issue(
        &mut self,
        scenario: &Scenario,
        client_id: &str,
        with_refresh: bool,
        issuer: &str,
        now: Instant,
    ) -> Value {
        let lifetime = scenario.token_lifetime_secs;
        let issued_at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let header = base64_encode(br#"{"alg":"RS256","typ":"JWT"}"#, true);
        let claims = json!({
            "exp": issued_at + lifetime, "iat": issued_at, "iss": issuer, "azp": client_id,
            "preferred_username": scenario.username, "typ": "Bearer",
        });
        let signature = self.next("sig");
        let access = format!(
            "{header}.{}.{}",
            base64_encode(claims.to_string().as_bytes(), true),
            base64_encode(signature.as_bytes(), true)
        );
        self.access
            .insert(access.clone(), now + Duration::from_secs(lifetime));
        let session_state = super::ids::guid("session", &signature);
        let mut body = json!({
            "access_token": access,
            "expires_in": lifetime,
            "refresh_expires_in": 0,
            "token_type": "Bearer",
            "not-before-policy": 0,
            "session_state": session_state,
            "scope": "profile email",
        });
        if with_refresh {
            let refresh = self.next("rt");
            self.refresh.insert(
                refresh.clone(),
                (now + REFRESH_LIFETIME, client_id.to_owned()),
            );
            body["refresh_token"] = json!(refresh);
            body["refresh_expires_in"] = json!(REFRESH_LIFETIME.as_secs());
        }
        body
    }

    /// `POST /v1/session/add`: a new session for valid Basic credentials.
    pub(crate) fn add_session(
        &mut self,
        scenario: &Scenario,
        basic: Option<(String, String)>,
        now: Instant,
    ) -> Option<String> {
        let (user, password) = basic?;
        if !user.eq_ignore_ascii_case(&scenario.username) || password != scenario.password {
            return None;
        }
        let token = self.next("zs");
        self.sessions.insert(token.clone(), now);
        Some(token)
    }

    /// `DELETE /v1/session`.
    pub(crate) fn end_session(&mut self, token: &str) {
        self.sessions.remove(token);
    }

    /// Whether a request's credentials are valid now (refreshing a session's idle timer).
    pub(crate) fn authorized(
        &mut self,
        mode: AuthMode,
        bearer: Option<&str>,
        session: Option<&str>,
        now: Instant,
    ) -> bool {
        match mode {
            AuthMode::Keycloak => bearer
                .is_some_and(|token| self.access.get(token).is_some_and(|expiry| *expiry > now)),
            AuthMode::Session => match session.and_then(|token| self.sessions.get_mut(token)) {
                Some(last_used) if now.saturating_duration_since(*last_used) < SESSION_IDLE => {
                    *last_used = now;
                    true
                }
                _ => false,
            },
        }
    }

    /// Invalidates every access token and session (refresh tokens stay valid, as they do
    /// when an access token merely expires).
    pub(crate) fn expire_all(&mut self) {
        self.access.clear();
        self.sessions.clear();
    }
}

fn oauth_error(status: u16, error: &str, description: &str) -> TokenAnswer {
    (
        status,
        json!({ "error": error, "error_description": description }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |key| {
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn password_grant_issues_a_token_that_expires_in_real_time() {
        let lab = Scenario::lab();
        let mut auth = Auth::new();
        let now = Instant::now();
        let grant = [
            ("grant_type", "password"),
            ("client_id", "zerto-client"),
            ("username", "admin"),
            ("password", "zerto-sim"),
        ];
        let (status, body) = auth.token(&lab, form(&grant), None, "https://x", now);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["expires_in"], 300);
        let token = body["access_token"].as_str().expect("token");
        assert_eq!(token.split('.').count(), 3, "JWT-shaped");
        assert!(auth.authorized(
            AuthMode::Keycloak,
            Some(token),
            None,
            now + Duration::from_secs(299)
        ));
        assert!(!auth.authorized(
            AuthMode::Keycloak,
            Some(token),
            None,
            now + Duration::from_secs(300)
        ));
        let refresh = body["refresh_token"].as_str().expect("refresh token");
        let (status, again) = auth.token(
            &lab,
            form(&[("grant_type", "refresh_token"), ("refresh_token", refresh)]),
            None,
            "x",
            now,
        );
        assert_eq!(status, 200, "{again}");
        let (status, reused) = auth.token(
            &lab,
            form(&[("grant_type", "refresh_token"), ("refresh_token", refresh)]),
            None,
            "x",
            now,
        );
        assert_eq!((status, &reused["error"]), (400, &json!("invalid_grant")));
    }

    #[test]
    fn wrong_credentials_answer_like_keycloak() {
        let lab = Scenario::lab();
        let mut auth = Auth::new();
        let grant = [
            ("grant_type", "password"),
            ("client_id", "zerto-client"),
            ("username", "admin"),
            ("password", "guess"),
        ];
        let (status, body) = auth.token(&lab, form(&grant), None, "x", Instant::now());
        assert_eq!(status, 401);
        assert_eq!(
            body,
            json!({"error": "invalid_grant", "error_description": "Invalid user credentials"})
        );
        let (status, body) = auth.token(
            &lab,
            form(&[
                ("grant_type", "client_credentials"),
                ("client_id", "zerto-client"),
            ]),
            None,
            "x",
            Instant::now(),
        );
        assert_eq!(
            (status, &body["error"]),
            (401, &json!("unauthorized_client")),
            "the lab has no client secret"
        );
    }

    #[test]
    fn sessions_and_expiry() {
        let lab = Scenario::lab();
        let mut auth = Auth::new();
        let now = Instant::now();
        assert!(
            auth.add_session(&lab, Some(("admin".into(), "bad".into())), now)
                .is_none()
        );
        let session = auth
            .add_session(&lab, Some(("ADMIN".into(), "zerto-sim".into())), now)
            .expect("session");
        assert!(auth.authorized(AuthMode::Session, None, Some(&session), now));
        assert!(!auth.authorized(AuthMode::Keycloak, None, Some(&session), now));
        auth.expire_all();
        assert!(!auth.authorized(AuthMode::Session, None, Some(&session), now));
    }
}
