//! The R2 object layout that `rete publish` writes and the Worker reads; this
//! doc is the agreement between the two (README.md "R2 layout" repeats it).
//!
//! ```text
//! datasets/NAME/<version>.rete            the file; immutable once written
//! datasets/NAME/versions/<version>.json   one history entry per published version
//! datasets/NAME/current.json              the pointer: the version being served
//! ```
//!
//! `<version>` is the file's content hash (FORMAT.md §2) as 32 lowercase hex
//! digits, the same string the Worker sends as the ETag, so a key names its
//! bytes and re-publishing the same content changes nothing.
//!
//! `current.json` and every history entry hold the same JSON object:
//!
//! ```json
//! {"name":"qudt","version":"0f3a…","key":"datasets/qudt/0f3a….rete",
//!  "bytes":1234567,"quads":55541,"published_at":"2026-11-05T10:00:00.000Z",
//!  "title":"QUDT units","license":"https://creativecommons.org/licenses/by/4.0/",
//!  "head":"UkVURQ0KGgo…"}
//! ```
//!
//! `key` is the object to read (a reader MUST use it rather than rebuild the
//! key from `version`); `bytes` is its length and `version` its content hash, so
//! a reader can check both against the header it reads. `published_at` is RFC
//! 3339 UTC, when the version was first published; a rollback copies the entry
//! unchanged. `title` and `license` copy the file's CARD members of that name
//! and are present only when the card has them (entries written before they
//! existed lack them): they let a listing show every dataset without opening
//! every file. `head` is the file's first read (FORMAT.md §1: bytes `[0, 16384)`,
//! or the whole file when shorter), in standard padded base64: a reader opens
//! the file from the pointer it has just read, so a cold request's first round
//! of reads holds both the pointer and the open (~22 KB of JSON instead of
//! ~300 bytes; entries written before it existed lack it, and a reader then
//! reads the first 16 KiB itself). Readers ignore fields they do not know.
//!
//! A publish writes, in this order: the `.rete` object (a multipart upload,
//! which becomes visible only when complete), then checks its size and header
//! against the local file, then the history entry, then `current.json`. Each
//! step is a single atomic PUT, and only the last changes what readers see, so
//! a failure at any point leaves the previous version served. A reader fetches
//! `current.json` (small, may be cached for seconds), then ranges of `key`
//! pinned by its ETag; old `.rete` objects stay until `rete gc` removes them,
//! so a reader that read the previous pointer keeps working.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

/// Where every dataset lives in the bucket.
pub const ROOT: &str = "datasets/";

/// Longest dataset name accepted.
pub const MAX_NAME_BYTES: usize = 64;

/// `current.json` and `versions/<version>.json`: one published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionEntry {
    /// The dataset name.
    pub name: String,
    /// Content hash of the file, 32 lowercase hex digits.
    pub version: String,
    /// Object key of the `.rete` file.
    pub key: String,
    /// Length of that object.
    pub bytes: u64,
    /// Distinct quads in it.
    pub quads: u64,
    /// When this version was first published, RFC 3339 UTC.
    #[serde(default)]
    pub published_at: String,
    /// The card's title, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The card's licence (an IRI or a name), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// The file's first read, base64: see [`VersionEntry::first_read`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
}

impl VersionEntry {
    /// The entry as stored: compact JSON with a trailing newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Parses a stored entry, checking that it is about `name` and that its
    /// version and key follow this layout (a key outside the dataset's prefix
    /// is refused: a reader never follows a pointer elsewhere in the bucket).
    pub fn from_json(bytes: &[u8], name: &str) -> Result<Self, String> {
        Self::from_json_with_first_read(bytes, name).map(|(entry, _)| entry)
    }

    /// [`from_json`](Self::from_json), also giving the first read `head`
    /// carries, decoded (checking the entry decodes it; a reader that keeps
    /// the bytes need not decode it again).
    pub fn from_json_with_first_read(bytes: &[u8], name: &str) -> Result<(Self, Option<Vec<u8>>), String> {
        let entry: Self = serde_json::from_slice(bytes).map_err(|e| format!("not a version entry: {e}"))?;
        if entry.name != name {
            return Err(format!("entry is about dataset {:?}, not {name:?}", entry.name));
        }
        if !is_version(&entry.version) {
            return Err(format!("version {:?} is not 32 lowercase hex digits", entry.version));
        }
        if !entry.key.starts_with(&dataset_prefix(name)) || !entry.key.ends_with(".rete") {
            return Err(format!("key {:?} is not a .rete file of this dataset", entry.key));
        }
        match entry.first_read() {
            Some(Err(error)) => Err(format!("head is not base64: {error}")),
            Some(Ok(bytes)) if bytes.len() as u64 > entry.bytes => Err(format!("head holds {} bytes of a {}-byte file", bytes.len(), entry.bytes)),
            Some(Ok(bytes)) => Ok((entry, Some(bytes))),
            None => Ok((entry, None)),
        }
    }

    /// The file's first read carried in the entry (`head`), `None` when the
    /// entry has none. The reader checks these bytes as it would the file's
    /// own: the header and its sections against their checksums, the
    /// header's content hash against `version`.
    pub fn first_read(&self) -> Option<Result<Vec<u8>, String>> {
        self.head.as_ref().map(|head| BASE64.decode(head).map_err(|e| e.to_string()))
    }

    /// Carries `bytes`, the file's first read, in the entry.
    pub fn set_first_read(&mut self, bytes: &[u8]) {
        self.head = Some(BASE64.encode(bytes));
    }
}

/// Checks a dataset name: 1–64 bytes of ASCII letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit (it becomes a key segment and a URL path segment).
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && name.as_bytes()[0].is_ascii_alphanumeric();
    if valid {
        Ok(())
    } else {
        Err(format!("invalid dataset name {name:?}: use 1 to {MAX_NAME_BYTES} letters, digits, '.', '_' or '-', starting with a letter or digit"))
    }
}

/// True for 32 lowercase hex digits.
pub fn is_version(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `datasets/NAME/`.
pub fn dataset_prefix(name: &str) -> String {
    format!("{ROOT}{name}/")
}

/// `datasets/NAME/<version>.rete`.
pub fn file_key(name: &str, version: &str) -> String {
    format!("{ROOT}{name}/{version}.rete")
}

/// `datasets/NAME/versions/<version>.json`.
pub fn entry_key(name: &str, version: &str) -> String {
    format!("{ROOT}{name}/versions/{version}.json")
}

/// `datasets/NAME/current.json`.
pub fn pointer_key(name: &str) -> String {
    format!("{ROOT}{name}/current.json")
}

/// What a key under [`ROOT`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyKind {
    /// `datasets/NAME/<version>.rete`
    File { name: String, version: String },
    /// `datasets/NAME/versions/<version>.json`
    Entry { name: String, version: String },
    /// `datasets/NAME/current.json`
    Pointer { name: String },
}

/// Classifies a key; `None` for keys this layout does not define.
pub fn parse_key(key: &str) -> Option<KeyKind> {
    let rest = key.strip_prefix(ROOT)?;
    let (name, rest) = rest.split_once('/')?;
    check_name(name).ok()?;
    let name = name.to_owned();
    if rest == "current.json" {
        return Some(KeyKind::Pointer { name });
    }
    if let Some(version) = rest.strip_prefix("versions/").and_then(|v| v.strip_suffix(".json")) {
        return is_version(version).then(|| KeyKind::Entry { name, version: version.to_owned() });
    }
    let version = rest.strip_suffix(".rete")?;
    is_version(version).then(|| KeyKind::File { name, version: version.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn keys_round_trip() {
        assert_eq!(parse_key(&file_key("qudt", V)), Some(KeyKind::File { name: "qudt".into(), version: V.into() }));
        assert_eq!(parse_key(&entry_key("qudt", V)), Some(KeyKind::Entry { name: "qudt".into(), version: V.into() }));
        assert_eq!(parse_key(&pointer_key("qudt")), Some(KeyKind::Pointer { name: "qudt".into() }));
        assert_eq!(parse_key("datasets/qudt/notes.txt"), None);
        assert_eq!(parse_key("datasets/qudt/ABC.rete"), None);
        assert_eq!(parse_key("other/qudt/current.json"), None);
    }

    #[test]
    fn names() {
        assert!(check_name("schema-org_2.1").is_ok());
        for bad in ["", "-x", ".hidden", "a/b", "ünï", "a b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    fn entry(title: Option<&str>, license: Option<&str>) -> VersionEntry {
        VersionEntry {
            name: "qudt".into(),
            version: V.into(),
            key: file_key("qudt", V),
            bytes: 10,
            quads: 2,
            published_at: "2026-11-05T10:00:00Z".into(),
            title: title.map(str::to_owned),
            license: license.map(str::to_owned),
            head: None,
        }
    }

    #[test]
    fn entry_json() {
        let entry = entry(None, None);
        let json = entry.to_json();
        assert_eq!(VersionEntry::from_json(&json, "qudt"), Ok(entry));
        assert!(VersionEntry::from_json(&json, "other").is_err());
        assert!(VersionEntry::from_json(b"{}", "qudt").is_err());
        let elsewhere = String::from_utf8(json).unwrap_or_default().replace("datasets/qudt/", "secrets/");
        assert!(VersionEntry::from_json(elsewhere.as_bytes(), "qudt").is_err());
    }

    #[test]
    fn entry_json_title_and_license_only_when_known() {
        let bare = String::from_utf8(entry(None, None).to_json()).unwrap_or_default();
        assert!(!bare.contains("title") && !bare.contains("license"), "{bare}");

        let full = entry(Some("QUDT units"), Some("https://creativecommons.org/licenses/by/4.0/"));
        let json = full.to_json();
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap_or_default();
        assert_eq!(value["title"], "QUDT units");
        assert_eq!(value["license"], "https://creativecommons.org/licenses/by/4.0/");
        assert_eq!(VersionEntry::from_json(&json, "qudt"), Ok(full));

        // A pointer written before the members existed, with a member from a later build.
        let old = format!(r#"{{"name":"qudt","version":"{V}","key":"datasets/qudt/{V}.rete","bytes":10,"quads":2,"published_at":"2026-11-05T10:00:00Z","later":1}}"#);
        assert_eq!(VersionEntry::from_json(old.as_bytes(), "qudt"), Ok(entry(None, None)));
    }

    #[test]
    fn entry_json_carries_the_first_read() {
        let mut entry = entry(None, None);
        entry.set_first_read(b"RETE\r\n\x1a\n");
        let json = entry.to_json();
        let parsed = VersionEntry::from_json(&json, "qudt").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(parsed.first_read(), Some(Ok(b"RETE\r\n\x1a\n".to_vec())));
        let (with, head) = VersionEntry::from_json_with_first_read(&json, "qudt").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((with, head), (parsed.clone(), Some(b"RETE\r\n\x1a\n".to_vec())));
        let bad = String::from_utf8(json).unwrap_or_default().replace(parsed.head.as_deref().unwrap_or_default(), "not*base64");
        assert!(VersionEntry::from_json(bad.as_bytes(), "qudt").is_err_and(|e| e.starts_with("head is not base64")));
        entry.set_first_read(&[0; 11]);
        assert!(VersionEntry::from_json(&entry.to_json(), "qudt").is_err_and(|e| e.contains("11 bytes of a 10-byte file")));
        assert_eq!(self::entry(None, None).first_read(), None);
    }
}
