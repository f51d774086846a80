//! Where the R2 target and its credentials come from: environment variables,
//! then a TOML file (`--config`, else `~/.config/rete/config.toml`). Kept apart
//! so the one place that holds a secret is small, and its Debug never shows it.
//!
//! ```toml
//! [r2]
//! account_id = "…"          # R2_ACCOUNT_ID
//! access_key_id = "…"       # R2_ACCESS_KEY_ID
//! secret_access_key = "…"   # R2_SECRET_ACCESS_KEY
//! bucket = "rete"           # R2_BUCKET
//! endpoint = "http://127.0.0.1:9000"  # R2_ENDPOINT (optional; replaces the account's endpoint)
//! url = "https://rete.example.workers.dev"  # RETE_URL (optional; base of printed links)
//! ```
//!
//! Each environment variable, when set and not empty, wins over the file's value.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// A secret string: no Display, and Debug prints a placeholder.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one call that signs requests.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The remote target as configured; any field may be missing.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct R2Config {
    /// Cloudflare account id: the endpoint is `https://<account>.r2.cloudflarestorage.com`.
    pub account_id: Option<String>,
    /// R2 API token's access key id.
    pub access_key_id: Option<String>,
    /// R2 API token's secret access key.
    pub secret_access_key: Option<Secret>,
    /// The bucket the Worker is bound to.
    pub bucket: Option<String>,
    /// Another S3-compatible endpoint (a local test server, a jurisdiction endpoint).
    pub endpoint: Option<String>,
    /// Public base URL of the Worker, for the printed card and SPARQL links.
    pub url: Option<String>,
    /// The file these values were read from, if any.
    pub file: Option<PathBuf>,
}

impl fmt::Debug for R2Config {
    // Hand-written so the access key id is shortened and the secret never appears.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key_id = self.access_key_id.as_deref().map(|id| format!("{}…", id.chars().take(4).collect::<String>()));
        f.debug_struct("R2Config")
            .field("account_id", &self.account_id)
            .field("access_key_id", &key_id)
            .field("secret_access_key", &self.secret_access_key)
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("url", &self.url)
            .field("file", &self.file)
            .finish()
    }
}

/// The environment variables, in the order they are reported when missing.
pub const ENV_VARS: [&str; 6] = ["R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY", "R2_BUCKET", "R2_ENDPOINT", "RETE_URL"];

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    r2: FileR2,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileR2 {
    account_id: Option<String>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    bucket: Option<String>,
    endpoint: Option<String>,
    url: Option<String>,
}

/// The default config file: `$XDG_CONFIG_HOME/rete/config.toml`, else `~/.config/rete/config.toml`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()).map(PathBuf::from).or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|home| PathBuf::from(home).join(".config")))?;
    Some(base.join("rete").join("config.toml"))
}

impl R2Config {
    /// Reads `explicit` (which must exist) or the default file (if it exists),
    /// then applies the environment.
    pub fn load(explicit: Option<&Path>) -> Result<Self> {
        let mut config = match explicit {
            Some(path) => Self::from_file(path)?,
            None => match default_path() {
                Some(path) if path.is_file() => Self::from_file(&path)?,
                _ => Self::default(),
            },
        };
        config.apply_env(|name| std::env::var(name).ok());
        Ok(config)
    }

    /// Reads a config file.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read config file {}", path.display()))?;
        let file: FileConfig = toml::from_str(&text).with_context(|| format!("invalid config file {}", path.display()))?;
        warn_if_readable_by_others(path, file.r2.secret_access_key.is_some());
        let r2 = file.r2;
        Ok(Self {
            account_id: r2.account_id,
            access_key_id: r2.access_key_id,
            secret_access_key: r2.secret_access_key.map(Secret),
            bucket: r2.bucket,
            endpoint: r2.endpoint,
            url: r2.url,
            file: Some(path.to_owned()),
        })
    }

    /// Overrides fields with the variables `lookup` returns (ignoring empty ones).
    pub fn apply_env(&mut self, lookup: impl Fn(&str) -> Option<String>) {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("R2_ACCOUNT_ID") {
            self.account_id = Some(v);
        }
        if let Some(v) = get("R2_ACCESS_KEY_ID") {
            self.access_key_id = Some(v);
        }
        if let Some(v) = get("R2_SECRET_ACCESS_KEY") {
            self.secret_access_key = Some(Secret(v));
        }
        if let Some(v) = get("R2_BUCKET") {
            self.bucket = Some(v);
        }
        if let Some(v) = get("R2_ENDPOINT") {
            self.endpoint = Some(v);
        }
        if let Some(v) = get("RETE_URL") {
            self.url = Some(v);
        }
    }

    /// True when no credential or target field is set at all (only `url` may be).
    pub fn is_empty(&self) -> bool {
        self.account_id.is_none() && self.access_key_id.is_none() && self.secret_access_key.is_none() && self.bucket.is_none() && self.endpoint.is_none()
    }

    /// The endpoint to use: `endpoint`, else the account's R2 endpoint.
    pub fn resolved_endpoint(&self) -> Option<String> {
        self.endpoint.clone().or_else(|| self.account_id.as_ref().map(|account| format!("https://{account}.r2.cloudflarestorage.com")))
    }

    /// The complete credentials, or an error naming every missing variable.
    pub fn complete(&self, bucket_flag: Option<&str>) -> Result<RemoteTarget> {
        let mut missing = Vec::new();
        let endpoint = self.resolved_endpoint();
        if endpoint.is_none() {
            missing.push("R2_ACCOUNT_ID (or R2_ENDPOINT)");
        }
        if self.access_key_id.is_none() {
            missing.push("R2_ACCESS_KEY_ID");
        }
        if self.secret_access_key.is_none() {
            missing.push("R2_SECRET_ACCESS_KEY");
        }
        let bucket = bucket_flag.map(str::to_owned).or_else(|| self.bucket.clone());
        if bucket.is_none() {
            missing.push("R2_BUCKET (or --bucket)");
        }
        match (endpoint, &self.access_key_id, &self.secret_access_key, bucket) {
            (Some(endpoint), Some(access_key_id), Some(secret_access_key), Some(bucket)) if missing.is_empty() => {
                Ok(RemoteTarget { endpoint, access_key_id: access_key_id.clone(), secret_access_key: secret_access_key.clone(), bucket })
            }
            _ => {
                let from = match &self.file {
                    Some(file) => format!(" (read {} and the environment)", file.display()),
                    None => String::from(" (no config file; read the environment)"),
                };
                bail!(crate::cmd::UsageError(format!("R2 is not fully configured{from}: set {}, or pass --local to publish to wrangler's local R2", missing.join(", "))))
            }
        }
    }
}

/// Everything needed to talk to one bucket over the S3 API.
#[derive(Clone)]
pub struct RemoteTarget {
    /// `https://<account>.r2.cloudflarestorage.com` or `R2_ENDPOINT`.
    pub endpoint: String,
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: Secret,
    /// Bucket name.
    pub bucket: String,
}

impl fmt::Debug for RemoteTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteTarget")
            .field("endpoint", &self.endpoint)
            .field("access_key_id", &format!("{}…", self.access_key_id.chars().take(4).collect::<String>()))
            .field("secret_access_key", &self.secret_access_key)
            .field("bucket", &self.bucket)
            .finish()
    }
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path, has_secret: bool) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && has_secret
        && meta.permissions().mode() & 0o077 != 0
    {
        eprintln!("rete: warning: {} holds a secret but others can read it; run chmod 600 on it", path.display());
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_: &Path, _: bool) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let mut config = R2Config::default();
        config.apply_env(env(&[("R2_ACCESS_KEY_ID", "AKIDEXAMPLE1234"), ("R2_SECRET_ACCESS_KEY", "very-secret-value"), ("R2_ACCOUNT_ID", "acct"), ("R2_BUCKET", "b")]));
        let text = format!("{config:?} {:?}", config.complete(None).ok());
        assert!(!text.contains("very-secret-value"), "{text}");
        assert!(!text.contains("AKIDEXAMPLE1234"), "{text}");
        assert!(text.contains("AKID…"), "{text}");
    }

    #[test]
    fn account_gives_the_r2_endpoint() {
        let mut config = R2Config::default();
        config.apply_env(env(&[("R2_ACCOUNT_ID", "abc123"), ("R2_ACCESS_KEY_ID", "k"), ("R2_SECRET_ACCESS_KEY", "s"), ("R2_BUCKET", "b")]));
        let target = config.complete(None).unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(target.endpoint, "https://abc123.r2.cloudflarestorage.com");
        config.apply_env(env(&[("R2_ENDPOINT", "http://127.0.0.1:9000")]));
        assert_eq!(config.resolved_endpoint().as_deref(), Some("http://127.0.0.1:9000"));
    }

    #[test]
    fn missing_variables_are_named() {
        let mut config = R2Config::default();
        config.apply_env(env(&[("R2_ACCESS_KEY_ID", "k"), ("R2_ACCOUNT_ID", "")]));
        let error = format!("{:#}", config.complete(None).err().map(|e| e.to_string()).unwrap_or_default());
        assert!(error.contains("R2_ACCOUNT_ID (or R2_ENDPOINT)") && error.contains("R2_SECRET_ACCESS_KEY") && error.contains("R2_BUCKET"), "{error}");
        assert!(!error.contains("R2_ACCESS_KEY_ID,"), "{error}");
    }

    #[test]
    fn file_then_env() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[r2]\naccount_id = \"a\"\naccess_key_id = \"k\"\nsecret_access_key = \"s\"\nbucket = \"from-file\"\n").unwrap_or_else(|e| panic!("{e}"));
        let mut config = R2Config::from_file(&path).unwrap_or_else(|e| panic!("{e:#}"));
        config.apply_env(env(&[("R2_BUCKET", "from-env")]));
        assert_eq!(config.bucket.as_deref(), Some("from-env"));
        assert_eq!(config.complete(Some("from-flag")).map(|t| t.bucket).ok().as_deref(), Some("from-flag"));
        std::fs::write(&path, "[r2]\nsecret = \"typo\"\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(R2Config::from_file(&path).is_err());
    }
}
