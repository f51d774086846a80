//! How label text and queries become search words (FORMAT.md §12.2): Unicode
//! NFKC, full case folding, diacritics removed, then cut at every character
//! that is neither a letter nor a digit. The writer and every reader must
//! cut the same way, so this is the only place it is done.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// FORMAT.md §12.2: a word longer than this many bytes is cut (at a character
/// boundary) to keep keys, and the directory's heads, short.
pub const MAX_WORD_BYTES: usize = 64;

/// The normalised form of `text`: NFKC, case-folded, without combining marks
/// (the diacritics of "Mélisande", the points of Hebrew), recomposed (NFC).
pub fn normalize(text: &str) -> String {
    let compatible: String = text.nfkc().collect();
    let folded = caseless::default_case_fold_str(&compatible);
    folded.nfd().filter(|&c| canonical_combining_class(c) == 0).nfc().collect()
}

/// The words of `text`, normalised, in order (repeats kept).
pub fn words(text: &str) -> Vec<String> {
    normalize(text).split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).map(|word| truncate(word).to_owned()).collect()
}

/// `word` cut to at most [`MAX_WORD_BYTES`] bytes, at a character boundary.
pub fn truncate(word: &str) -> &str {
    if word.len() <= MAX_WORD_BYTES {
        return word;
    }
    let end = (0..=MAX_WORD_BYTES).rev().find(|&i| word.is_char_boundary(i)).unwrap_or(0);
    &word[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_case_compatibility_forms_and_diacritics() {
        assert_eq!(normalize("Mélisande"), "melisande");
        assert_eq!(normalize("STRASSE Straße"), "strasse strasse");
        assert_eq!(normalize("ﬁle Ⅻ"), "file xii");
        assert_eq!(normalize("Ἀθῆναι"), "αθηναι");
        assert_eq!(normalize("Łódź"), "łodz", "ł has no decomposition: it stays");
        assert_eq!(normalize("ＡＢＣ１２"), "abc12");
    }

    #[test]
    fn cuts_words_at_anything_but_letters_and_digits() {
        assert_eq!(words("Lincoln, Abraham (1809–1865)"), ["lincoln", "abraham", "1809", "1865"]);
        assert_eq!(words("  rdf:type  "), ["rdf", "type"]);
        assert_eq!(words("東京タワー"), ["東京タワー"]);
        assert!(words("—…!").is_empty());
        let long = "ł".repeat(40);
        assert_eq!(words(&long)[0].len(), MAX_WORD_BYTES);
    }
}
