//! What a target holds for each dataset, read from a listing plus the small
//! JSON objects of the layout: the shared view of `rete ls`, `rollback` and
//! `gc`. A version may lack its file or its history entry (an interrupted
//! publish or gc); the catalog shows that rather than hiding it.

use super::layout::{self, KeyKind, VersionEntry};
use super::{ObjectInfo, StorageError, Target};
use std::collections::BTreeMap;

/// One dataset.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Its name.
    pub name: String,
    /// `current.json`, if present and readable.
    pub current: Option<VersionEntry>,
    /// Why `current.json` could not be read, if it is there but invalid.
    pub current_error: Option<String>,
    /// Every version found, newest first.
    pub versions: Vec<StoredVersion>,
}

/// One version of a dataset, as found.
#[derive(Debug, Clone)]
pub struct StoredVersion {
    /// Content hash.
    pub version: String,
    /// `versions/<version>.json`, if present and readable.
    pub entry: Option<VersionEntry>,
    /// The `.rete` object, if present.
    pub file: Option<ObjectInfo>,
}

impl StoredVersion {
    /// When it was published (from its entry), else when its file was written.
    pub fn published_at(&self) -> String {
        match (&self.entry, &self.file) {
            (Some(entry), _) => entry.published_at.clone(),
            (None, Some(ObjectInfo { modified_unix_s: Some(s), .. })) => chrono::DateTime::from_timestamp(*s, 0).map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()).unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// `ok`, `no file` (entry only) or `no entry` (an upload never switched to, or half collected).
    pub fn state(&self) -> &'static str {
        match (&self.entry, &self.file) {
            (Some(_), Some(_)) => "ok",
            (Some(_), None) => "no file",
            _ => "no entry",
        }
    }
}

impl Dataset {
    /// The stored version with this hash, or with this unique prefix (at least 4 digits).
    pub fn find(&self, version: &str) -> Result<&StoredVersion, String> {
        if let Some(found) = self.versions.iter().find(|v| v.version == version) {
            return Ok(found);
        }
        let matches: Vec<&StoredVersion> = if version.len() >= 4 { self.versions.iter().filter(|v| v.version.starts_with(version)).collect() } else { Vec::new() };
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(format!("{} has no version {version:?}; `rete ls {}` lists them", self.name, self.name)),
            _ => Err(format!("{version:?} matches {} versions of {}; give more digits", matches.len(), self.name)),
        }
    }
}

/// Reads the catalog of one dataset, or of all of them.
pub fn load(target: &Target, name: Option<&str>) -> Result<Vec<Dataset>, StorageError> {
    let prefix = name.map_or_else(|| layout::ROOT.to_owned(), layout::dataset_prefix);
    let mut files: BTreeMap<String, BTreeMap<String, ObjectInfo>> = BTreeMap::new();
    let mut entries: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut pointers = Vec::new();
    for object in target.list(&prefix)? {
        match layout::parse_key(&object.key) {
            Some(KeyKind::File { name, version }) => {
                files.entry(name).or_default().insert(version, object);
            }
            Some(KeyKind::Entry { name, version }) => entries.entry(name).or_default().push(version),
            Some(KeyKind::Pointer { name }) => pointers.push(name),
            None => {}
        }
    }
    let mut names: Vec<String> = files.keys().chain(entries.keys()).chain(pointers.iter()).cloned().collect();
    names.sort();
    names.dedup();
    let mut keys = Vec::new();
    for name in &names {
        if pointers.contains(name) {
            keys.push(layout::pointer_key(name));
        }
        for version in entries.get(name).into_iter().flatten() {
            keys.push(layout::entry_key(name, version));
        }
    }
    let bodies: BTreeMap<String, Option<Vec<u8>>> = keys.iter().cloned().zip(target.get_many(&keys)?).collect();
    let mut datasets = Vec::new();
    for name in names {
        let (current, current_error) = match bodies.get(&layout::pointer_key(&name)).cloned().flatten() {
            Some(bytes) => match VersionEntry::from_json(&bytes, &name) {
                Ok(entry) => (Some(entry), None),
                Err(e) => (None, Some(e)),
            },
            None => (None, None),
        };
        let mut by_version: BTreeMap<String, StoredVersion> = BTreeMap::new();
        for (version, file) in files.remove(&name).unwrap_or_default() {
            by_version.insert(version.clone(), StoredVersion { version, entry: None, file: Some(file) });
        }
        for version in entries.remove(&name).unwrap_or_default() {
            let entry = bodies.get(&layout::entry_key(&name, &version)).cloned().flatten().and_then(|bytes| VersionEntry::from_json(&bytes, &name).ok());
            by_version.entry(version.clone()).or_insert_with(|| StoredVersion { version, entry: None, file: None }).entry = entry;
        }
        let mut versions: Vec<StoredVersion> = by_version.into_values().collect();
        versions.sort_by(|a, b| b.published_at().cmp(&a.published_at()).then_with(|| a.version.cmp(&b.version)));
        datasets.push(Dataset { name, current, current_error, versions });
    }
    Ok(datasets)
}
